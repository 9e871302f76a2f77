/**
 * Text fields that reach the prompt, the dashboard and notifications (instance webhooks, chat,
 * approval notes) must be plain text: no NUL or other C0 control characters. Tab and newline
 * (LF, or CR LF as browsers send it) are allowed; a lone CR is not.
 */
import { z } from "zod";

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]|\r(?!\n)/;

export const CONTROL_MESSAGE = "must not contain control characters (NUL or other C0 characters except tab and newline)";

export const plainText = (schema: z.ZodString = z.string()) => schema.refine((text) => !CONTROL.test(text), CONTROL_MESSAGE);
