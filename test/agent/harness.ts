/**
 * Test harness for the agent run: the fixture of test/support/agent-fixture.ts, and scripted LLM
 * servers that close after each test.
 */
import { afterEach } from "vitest";
import { ScriptedLlm } from "../support/scripted-llm.ts";

export * from "../support/agent-fixture.ts";

const servers: ScriptedLlm[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

export async function scriptedLlm(): Promise<ScriptedLlm> {
  const llm = await new ScriptedLlm().start();
  servers.push(llm);
  return llm;
}
