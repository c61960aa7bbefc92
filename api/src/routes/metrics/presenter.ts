// The report's wire shapes are built by the domain (domain/dashboard/usageReport.ts): JSON as is, CSV as text.
export { usageReportCsv as presentUsageCsv } from "../../domain/dashboard/usageReport.ts";
