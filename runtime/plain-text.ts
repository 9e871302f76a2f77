/**
 * Text fields that reach the prompt, the dashboard and notifications (instance webhooks, chat,
 * approval notes) must be plain text: no NUL or other C0 control characters. Tab and newline
 * (LF, or CR LF as browsers send it) are allowed; a lone CR is not. The same rule covers every
 * stored text: `controlCharacterField` finds the first string breaking it anywhere in a parsed
 * value, so the shared validation layers (jobs/validate.ts for the API, the dashboard's form
 * helpers, agent/tools/index.ts for tool arguments) refuse it naming the field.
 */
import { z } from "zod";

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]|\r(?!\n)/;

export const CONTROL_MESSAGE = "must not contain control characters (NUL or other C0 characters except tab and newline)";

/** `text` made plain: each control character the rule refuses becomes a space (for text taken as sent, never refused). */
export const toPlainText = (text: string): string => text.replace(new RegExp(CONTROL.source, "g"), " ");

export const plainText = (schema: z.ZodString = z.string()) => schema.refine((text) => !CONTROL.test(text), CONTROL_MESSAGE);

/** The path (`a.b.0`) of the first string in `value` holding a control character, or null. */
export function controlCharacterField(value: unknown, path: string[] = []): string | null {
  if (typeof value === "string") return CONTROL.test(value) ? path.join(".") || "value" : null;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = controlCharacterField(item, [...path, String(i)]);
      if (found !== null) return found;
    }
    return null;
  }
  if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const found = controlCharacterField(item, [...path, key]);
      if (found !== null) return found;
    }
  }
  return null;
}
