/**
 * A clock that moves only when told to: what tests and the deterministic simulation inject.
 * `advance` moves wall and monotonic time together; `stepWall` moves the wall clock alone (an
 * NTP step or an operator's `date -s`), as a host's monotonic clock would not follow it.
 */
import type { Clock } from "../../runtime/clock.ts";

export class FakeClock implements Clock {
  private elapsed = 0;
  constructor(private current = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  monotonic(): number {
    return this.elapsed;
  }
  advance(ms: number): void {
    this.current += ms;
    this.elapsed += ms;
  }
  /** Test time jumps to `ms` (monotonic time moves by the same amount). */
  set(ms: number): void {
    this.elapsed += ms - this.current;
    this.current = ms;
  }
  /** The wall clock steps by `ms` (negative: back); monotonic time does not move. */
  stepWall(ms: number): void {
    this.current += ms;
  }
}
