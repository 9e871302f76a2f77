/**
 * Validation at the edge: zod schemas through @hono/zod-validator, with failures turned into a
 * 400 whose message names the field and the problem. Handlers only see parsed, typed input.
 * Every string in it is plain text (runtime/plain-text.ts): a control character anywhere is a 400
 * naming the field, whatever the route's own schema says.
 */
import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import { createMiddleware } from "hono/factory";
import type { z, ZodType } from "zod";
import { RequestError } from "./errors.ts";
import { CONTROL_MESSAGE, controlCharacterField } from "../runtime/plain-text.ts";

/** Throws the 400 for the first field of parsed input that is not plain text. */
export function refuseControlCharacters(where: string, data: unknown): void {
  const field = controlCharacterField(data);
  if (field !== null) throw new RequestError(400, `invalid ${where}: ${field}: ${CONTROL_MESSAGE}`);
}

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
  refuseControlCharacters("body", parsed.data);
  return parsed.data;
}

export const validate = <T extends ZodType, Target extends keyof ValidationTargets>(target: Target, schema: T) =>
  // The validator names what it validates, so the API's description (jobs/openapi/) shows the very schema the route checks.
  Object.assign(
    zValidator(target, schema, (result) => {
      const where = target === "json" ? "body" : target;
      if (!result.success) throw new RequestError(400, `invalid ${where}: ${describeIssues(result.error.issues)}`);
      refuseControlCharacters(where, result.data);
    }),
    { validates: { target, schema } as Validates },
  );

/** What a `validate` middleware checks: the request part and its zod schema (`optional`: an empty body is allowed). */
export interface Validates {
  target: keyof ValidationTargets;
  schema: ZodType;
  optional?: boolean;
}

/**
 * For a route whose handler parses an optional body itself (an empty body means `{}`): passes the
 * request on untouched and names the schema the handler parses with, for the API's description.
 */
export const optionalBody = (schema: ZodType) =>
  Object.assign(
    createMiddleware(async (_c, next) => next()),
    { validates: { target: "json", schema, optional: true } as Validates },
  );

/** The part and schema a handler installed by `validate` checks, or null for any other handler. */
export const validatesOf = (handler: unknown): Validates | null =>
  typeof handler === "function" && "validates" in handler ? (handler.validates as Validates) : null;
