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

/** The last wall and monotonic readings wallSteppedBack saw, per clock. */
const anchors = new WeakMap<Clock, { wall: number; mono: number }>();

/**
 * How far the wall clock stepped back since the last call for this clock (0: it did not, this is
 * the first call, or the clock has no monotonic part — the Worker, whose wall clock is not stepped).
 * Measured against monotonic time: the wall time the last call saw plus the monotonic time since.
 * Each step is reported once: the next call measures from this one.
 */
export function wallSteppedBack(clock: Clock): number {
  if (!clock.monotonic) return 0;
  const wall = clock.now();
  const mono = clock.monotonic();
  const anchor = anchors.get(clock);
  anchors.set(clock, { wall, mono });
  return anchor ? Math.max(0, anchor.wall + (mono - anchor.mono) - wall) : 0;
}
