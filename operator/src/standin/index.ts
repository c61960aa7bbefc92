export { type RunningStandin, STANDIN_LOG_LINES, type StandinOptions, splitPrefix, startStandin } from "./standin.ts";
