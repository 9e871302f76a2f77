/** Time as the core sees it: injected, so tests and the simulation drive a fake clock (test/support/fake-clock.ts). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

