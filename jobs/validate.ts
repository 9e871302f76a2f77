/**
 * Validation at the edge: zod schemas through @hono/zod-validator, with failures turned into a
 * 400 whose message names the field and the problem. Handlers only see parsed, typed input.
 */
import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import type { z, ZodType } from "zod";
import { RequestError } from "./errors.ts";

export function describeIssues(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.map(String).join(".") : "body"}: ${issue.message}`)
    .join("; ");
}

/**
 * Parses a raw body (routes that must verify a signature on the exact bytes read the text first)
 * as JSON and validates it: 400 naming the problem otherwise.
 */
export function parseJsonBody<T extends ZodType>(raw: string, schema: T): z.infer<T> {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new RequestError(400, "invalid body: not JSON");
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new RequestError(400, `invalid body: ${describeIssues(parsed.error.issues)}`);
  return parsed.data;
}

export const validate = <T extends ZodType, Target extends keyof ValidationTargets>(target: Target, schema: T) =>
  zValidator(target, schema, (result) => {
    if (!result.success) {
      const where = target === "json" ? "body" : target;
      throw new RequestError(400, `invalid ${where}: ${describeIssues(result.error.issues)}`);
    }
  });
