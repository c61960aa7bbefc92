// @berth/e2e: the test bed (a fleet of real clusters as local processes) and, later, journeys and pages.
export * from "./testbed/index.ts";
