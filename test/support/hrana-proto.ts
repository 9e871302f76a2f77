/**
 * Test support for the Hrana test server: the JSON shapes of a Hrana-over-HTTP pipeline request,
 * from tursodatabase/libsql docs/HRANA_3_SPEC.md ("Hrana over HTTP", "Shared structures") at commit
 * f8fb14f3638e44edf3dbace489618c7768daee55. Absent optional fields are accepted (the reference
 * server reads them as unset); a body that does not fit is a protocol error (400).
 */
import { z } from "zod";
import type { BatchCond } from "./hrana-exec.ts";

const value = z.discriminatedUnion("type", [
  z.object({ type: z.literal("null") }),
  z.object({ type: z.literal("integer"), value: z.string().regex(/^-?\d+$/) }),
  z.object({ type: z.literal("float"), value: z.number() }),
  z.object({ type: z.literal("text"), value: z.string() }),
  z.object({ type: z.literal("blob"), base64: z.string() }),
]);
const stmt = z.object({
  sql: z.string().nullish(),
  sql_id: z.number().int().nullish(),
  args: z.array(value).optional(),
  named_args: z.array(z.object({ name: z.string(), value })).optional(),
  want_rows: z.boolean().optional(),
});
const cond: z.ZodType<BatchCond> = z.lazy(() =>
  z.discriminatedUnion("type", [
    z.object({ type: z.literal("ok"), step: z.number().int() }),
    z.object({ type: z.literal("error"), step: z.number().int() }),
    z.object({ type: z.literal("not"), cond }),
    z.object({ type: z.literal("and"), conds: z.array(cond) }),
    z.object({ type: z.literal("or"), conds: z.array(cond) }),
    z.object({ type: z.literal("is_autocommit") }),
  ]),
);
const streamRequest = z.discriminatedUnion("type", [
  z.object({ type: z.literal("close") }),
  z.object({ type: z.literal("execute"), stmt }),
  z.object({ type: z.literal("batch"), batch: z.object({ steps: z.array(z.object({ condition: cond.nullish(), stmt })) }) }),
  z.object({ type: z.literal("sequence"), sql: z.string().nullish(), sql_id: z.number().int().nullish() }),
  z.object({ type: z.literal("store_sql"), sql_id: z.number().int(), sql: z.string() }),
  z.object({ type: z.literal("close_sql"), sql_id: z.number().int() }),
  z.object({ type: z.literal("get_autocommit") }),
]);
export const pipelineBody = z.object({ baton: z.string().nullish(), requests: z.array(streamRequest) });
export type StreamRequest = z.infer<typeof streamRequest>;
