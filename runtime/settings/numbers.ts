/**
 * Numeric settings: one helper per kind of number gives a row its environment schema (text
 * coerced, with its default), the per-agent schema (a JSON number) and the bounds the reference
 * prints, all from the same two bounds (runtime/setting-bounds.ts), so a per-agent value can
 * never go past what its environment variable accepts.
 */
import { z } from "zod";

const grouped = (n: number) => n.toLocaleString("en-US");

const bounded = <T extends z.ZodNumber | z.ZodCoercedNumber>(n: T, min: number, max: number, why = ""): T =>
  n.min(min, `must be at least ${min}`).max(max, `must be at most ${max}${why}`) as T;

/** A whole number in [min, max]; `why` explains the maximum in the refusal. */
export function whole(min: number, max: number, fallback: number, why?: string) {
  return {
    schema: bounded(z.coerce.number().int("must be a whole number"), min, max, why).default(fallback),
    agentSchema: bounded(z.number().int("must be a whole number"), min, max),
    bounds: `${grouped(min)} – ${grouped(max)}`,
  };
}

/** A number in [min, max], fractions allowed. */
export function fraction(min: number, max: number, fallback: number) {
  return {
    schema: bounded(z.coerce.number(), min, max).default(fallback),
    agentSchema: bounded(z.number(), min, max),
    bounds: `${grouped(min)} – ${grouped(max)} (fractions allowed)`,
  };
}

/** Seconds (or milliseconds) in Config are milliseconds. */
export const ms = (seconds: number) => seconds * 1000;

/** A delay in Config's milliseconds as the effective-settings view shows it; 0 turns it off. */
export const secondsOrNever = (delayMs: number) => (delayMs ? `${delayMs / 1000} s` : "never");
