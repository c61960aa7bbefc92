// Reading an import's CSV (RFC 4180: quoted fields, doubled quotes, CRLF or LF line ends, a UTF-8 BOM
// as spreadsheets write it). A file that cannot be read as a whole is refused before any row is looked
// at; everything about one row's values is that row's own outcome (rows.ts).
import { DomainError } from "../../../errors.ts";

export interface CsvRecord {
  /** The file's line on which the record starts (1 = the header). */
  line: number;
  cells: string[];
}

export function malformed(reason: string, message: string, details: Record<string, unknown> = {}): DomainError {
  return new DomainError("import_csv_malformed", message, { reason, ...details });
}

/** Every record of the text, blank lines left out. */
export function parseCsv(text: string): CsvRecord[] {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const out: CsvRecord[] = [];
  let cells: string[] = [];
  let cell = "";
  let line = 1;
  let start = 1;
  let quoted = false;
  let wasQuoted = false;
  const endRecord = () => {
    cells.push(cell);
    if (!(cells.length === 1 && cells[0] === "" && !wasQuoted)) out.push({ line: start, cells });
    cells = [];
    cell = "";
    wasQuoted = false;
  };
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (quoted) {
      if (c === '"') {
        if (src[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === "\n") line++;
        cell += c;
      }
      continue;
    }
    if (c === '"') {
      if (cell !== "" || wasQuoted)
        throw malformed("stray_quote", `line ${line}: a quote inside an unquoted field`, { line });
      quoted = true;
      wasQuoted = true;
    } else if (c === ",") {
      cells.push(cell);
      cell = "";
      wasQuoted = false;
    } else if (c === "\r" && src[i + 1] === "\n") {
      // CRLF: the LF ends the record.
    } else if (c === "\n") {
      endRecord();
      line++;
      start = line;
    } else {
      if (wasQuoted) throw malformed("stray_quote", `line ${line}: text after a closing quote`, { line });
      cell += c;
    }
  }
  if (quoted) throw malformed("unterminated_quote", `line ${start}: a quoted field is never closed`, { line: start });
  endRecord();
  return out;
}

/** One cell as a spreadsheet must not read it: a formula start gets a leading apostrophe (text). */
export const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "";
  let s = String(value);
  if (typeof value === "string" && FORMULA_START.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export function csvLine(cells: (string | number | null | undefined)[]): string {
  return `${cells.map(csvCell).join(",")}\r\n`;
}
