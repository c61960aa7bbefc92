// Time, injected: every service reads the time from a Clock so tests own it.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
