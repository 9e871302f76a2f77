/**
 * The answers of the strict Vast.ai test server (vast-server.ts and its market, vast-market.ts):
 * Vast's refusal shape `{success: false, error, msg}` (vast-ai/docs c6246226,
 * api-reference/openapi/yaml/create_instance.yaml `components.schemas.Error`), shared so both
 * refuse alike.
 */
export type Reply = { status: number; body: unknown; raw?: string };

export const refuse = (status: number, error: string, msg: string, extra: Record<string, unknown> = {}): Reply => ({
  status,
  body: { success: false, error, msg, ...extra },
});
export const ok = (body: unknown): Reply => ({ status: 200, body });

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
