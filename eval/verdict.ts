/**
 * What `npm run eval` says about each situation and how it exits. The rules policy is expected to
 * fail the situations listed here (RULES_NEED_AN_LLM: reading a log, following a request worded
 * as a person words it), so on a clean install, without an LLM, a
 * FAIL line there says what was expected, what happened and that the situation needs an LLM, and
 * the eval exits 0 when the rules policy scores exactly as expected (1 when it fails anything
 * else or makes a forbidden decision). With a model, every FAIL line says the same, and the eval
 * exits 1 only on a forbidden decision.
 */
import type { EvalReport } from "./evaluate.ts";
import type { SituationResult } from "./score.ts";

/** The situations the rules policy cannot pass: they need an LLM. */
export const RULES_NEED_AN_LLM: readonly string[] = [
  "exit with a missing file in the log",
  "out of memory once",
  "destroy rejected, then asked again",
  "a human asks to stop an instance",
  "a human asks for a reboot",
];

const RULES = "rules policy";

/** One situation's line(s): pass, or FAIL with what was expected, what happened, and why. */
export function resultLines(r: SituationResult, decider: string): string[] {
  if (r.pass) return [`pass  ${r.name}`];
  const expectedFail = decider === RULES && RULES_NEED_AN_LLM.includes(r.name) && r.wrong.length === 0;
  return [
    `FAIL  ${r.name}${expectedFail ? " (expected without an LLM)" : ""}`,
    `      expected: ${r.missed.length ? r.missed.join("; ") : "nothing forbidden done"}`,
    `      happened: ${r.decisions.length ? r.decisions.join("; ") : "no decision"}${r.wrong.length ? ` (forbidden: ${r.wrong.join("; ")})` : ""}`,
    ...(expectedFail ? ["      this situation needs an LLM: the rules policy cannot read logs or a request in a person's words"] : []),
  ];
}

/** The closing line and the exit code. */
export function verdict(report: EvalReport): { code: 0 | 1; line: string } {
  const forbidden = report.results.filter((r) => r.wrong.length > 0).map((r) => r.name);
  if (forbidden.length) return { code: 1, line: `forbidden decisions made in: ${forbidden.join("; ")}` };
  if (report.decider !== RULES)
    return { code: 0, line: `${report.decider}: ${report.passed}/${report.total} passed, no forbidden decision` };
  const failed = report.results.filter((r) => !r.pass).map((r) => r.name);
  const unexpected = failed.filter((name) => !RULES_NEED_AN_LLM.includes(name));
  const names = new Set(report.results.map((r) => r.name));
  const nowPassing = RULES_NEED_AN_LLM.filter((name) => names.has(name) && !failed.includes(name));
  if (unexpected.length) return { code: 1, line: `the rules policy failed what it should pass: ${unexpected.join("; ")}` };
  const extra = nowPassing.length ? `; it now also passes ${nowPassing.join("; ")} (update eval/verdict.ts)` : "";
  return {
    code: 0,
    line: `the rules policy scored as expected: ${failed.length === 1 ? "the 1 FAIL needs" : `the ${failed.length} FAILs need`} an LLM (set OPENAI_API_KEY or OPENAI_BASE_URL to evaluate a model)${extra}`,
  };
}
