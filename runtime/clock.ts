/**
 * Time as the core sees it: injected, so tests and the simulation drive a fake clock
 * (test/support/fake-clock.ts). `now()` is the wall clock (what the database stores); where the
 * host has one, `monotonic()` measures how long something lasts in-process without following a
 * step of the wall clock (Node: performance.now()). Workers have no such clock (their timers
 * advance with I/O only), so there the wall clock stands in and a step moves both.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Milliseconds from an arbitrary origin, never stepped (absent: the wall clock stands in). */
  monotonic?(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: typeof performance === "undefined" ? () => Date.now() : () => performance.now(),
};

/** The clock's monotonic reading, or its wall time where it has none. */
export const monotonicNow = (clock: Clock): number => (clock.monotonic ? clock.monotonic() : clock.now());
