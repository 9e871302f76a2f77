/**
 * The request's way to keep work going after it has answered: the Worker's `waitUntil`, or
 * nothing on Node (no execution context there: a promise simply runs on). What must not delay the
 * answer (a run's trace export, pipeline/perform-run.ts) is handed to it.
 */
import type { Context } from "hono";

export function keepAlive(c: Context): ((work: Promise<unknown>) => void) | undefined {
  try {
    const ctx = c.executionCtx;
    return (work) => ctx.waitUntil(work);
  } catch {
    return undefined;
  }
}
