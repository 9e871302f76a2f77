/**
 * What a human message asks for, read literally: whether its text names an instance (its id as a
 * whole word) and an action on it (a word for that action kind). The unconcerned-instance rule
 * and the evidence of an action read the first; lifting a human's rejection needs both (a "good
 * morning" lifts nothing, "destroy sim-2" lifts only sim-2's destroy block). A negated request is
 * not asking: an action word counts only where nothing earlier in its sentence negates it ("Do NOT
 * destroy sim-2" lifts nothing; a hijacked model must not be handed a rejection's lift by it).
 */
import type { ActionKind } from "./action-types.ts";

/** The words that ask for each action kind (lower case, matched as whole words). */
export const ACTION_WORDS: Record<ActionKind, readonly string[]> = {
  start: ["start", "restart", "boot", "resume", "bring up", "bring back"],
  stop: ["stop", "halt", "shut down", "shutdown", "pause"],
  reboot: ["reboot", "restart", "reset"],
  destroy: ["destroy", "delete", "terminate", "remove", "kill"],
  label: ["label", "rename", "tag"],
  replace: ["replace", "replacement", "re-rent", "rent another", "new instance"],
  rent: ["rent", "lease"],
};

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const word = (w: string) => new RegExp(`(^|[^a-z0-9_-])${escapeRegExp(w.toLowerCase())}($|[^a-z0-9_-])`);

/** Whether the text names the instance id as a whole word ("sim-1" is not named by "sim-10"). */
export function namesInstance(text: string, instanceId: string): boolean {
  return word(instanceId).test(text.toLowerCase());
}

/** Words that negate an action word after them in the same sentence. */
const NEGATIONS =
  /(^|[^a-z0-9_'’-])(not|no|never|nor|neither|don['’]?t|doesn['’]?t|won['’]?t|can['’]?t|cannot|shouldn['’]?t|mustn['’]?t|wouldn['’]?t|without|avoid|refrain)($|[^a-z0-9_'’-])/;

/** Whether the text names the instance and a word for the action kind, not negated in its sentence. */
export function asksFor(text: string, instanceId: string, kind: string): boolean {
  const words = ACTION_WORDS[kind as ActionKind];
  if (!words || !namesInstance(text, instanceId)) return false;
  const sentences = text.toLowerCase().split(/[.!?;\n]+/);
  return sentences.some((sentence) =>
    words.some((w) => {
      const at = sentence.search(word(w));
      return at >= 0 && !NEGATIONS.test(sentence.slice(0, at + 1));
    }),
  );
}

/** The text of a human message event's payload, or "" for any other shape. */
export function humanText(payload: unknown): string {
  const text = (payload as { text?: unknown } | null)?.text;
  return typeof text === "string" ? text : "";
}
