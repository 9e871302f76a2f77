/** A clock that moves only when told to: what tests and the deterministic simulation inject. */
import type { Clock } from "../../runtime/clock.ts";

export class FakeClock implements Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}
