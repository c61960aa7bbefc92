// Time is injected so tests own it (lease expiry, report timestamps). Only wall-clock milliseconds are
// needed: every timer in the operator is a plain setTimeout, and durations are configuration.
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
