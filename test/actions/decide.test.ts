/**
 * The action table (fleet/actions/decide.ts), one test per gate, as a pure function over facts (no
 * database): each gate gives its outcome when it holds, and yields to the gates above it. The
 * integration tests (test/actions, test/replacement, test/economics, test/effects) run the same
 * table through executeAction on real libSQL.
 */
import { describe, expect, it } from "vitest";
import { decideAction, GATES, humanNeeded, renderGateTable, type ActionFacts } from "../../fleet/actions/decide.ts";

/** An LLM's reboot nothing stands in the way of. */
const quiet: ActionFacts = {
  kind: "reboot",
  decidedBy: "llm",
  approvedByHuman: false,
  operatorAsks: false,
  shadow: false,
  providerCannot: false,
  recorded: false,
  pendingApproval: false,
  rejected: false,
  approvalListed: false,
  twoPerson: false,
  overSpendLimit: false,
  addsSpend: false,
  fleetBreakerOpen: false,
  callerAsks: null,
};
const decide = (f: Partial<ActionFacts>) => decideAction({ ...quiet, ...f });
const operator = { decidedBy: "human" as const, operatorAsks: true };
const approval = { decidedBy: "human" as const, approvedByHuman: true };

describe("the action table", () => {
  it("lists its gates in order, each once", () => {
    expect(GATES.map((g) => [g.name, g.outcome])).toEqual([
      ["provider cannot", "unsupported"],
      ["already recorded", "recorded"],
      ["approval pending", "wait"],
      ["rejected by a human", "blocked"],
      ["owner budget", "refused"],
      ["owner rentals per hour", "refused"],
      ["shadow mode", "proposed"],
      ["fleet breaker open", "approval"],
      ["needs a human", "approval"],
      ["act", "act"],
    ]);
  });

  it("provider cannot → unsupported, before everything else (even a recorded key or the approval list)", () => {
    expect(decide({ providerCannot: true, recorded: true, approvalListed: true, shadow: true })).toMatchObject({
      gate: "provider cannot",
      outcome: "unsupported",
    });
    expect(decide({ ...operator, providerCannot: true, approvalListed: true }).outcome).toBe("unsupported");
  });

  it("already recorded → the recorded answer, before a pending approval or a block", () => {
    expect(decide({ recorded: true, pendingApproval: true, rejected: true })).toMatchObject({
      gate: "already recorded",
      outcome: "recorded",
    });
    expect(decide({ ...approval, recorded: true }).outcome).toBe("recorded");
  });

  it("approval pending → wait, for the LLM, the rules and an operator's own request that needs a human; an approval carried out goes on", () => {
    expect(decide({ pendingApproval: true }).outcome).toBe("wait");
    expect(decide({ decidedBy: "rules", pendingApproval: true, rejected: true }).outcome).toBe("wait");
    expect(decide({ ...operator, kind: "destroy", approvalListed: true, pendingApproval: true }).outcome).toBe("wait");
    expect(decide({ ...operator, kind: "stop", pendingApproval: true }).outcome).toBe("act");
    expect(decide({ ...approval, kind: "destroy", approvalListed: true, pendingApproval: true }).outcome).toBe("act");
  });

  it("rejected by a human → blocked, before shadow mode and the approval; a human's own stop and an approval carried out are not blocked", () => {
    expect(decide({ rejected: true })).toMatchObject({ gate: "rejected by a human", outcome: "blocked" });
    expect(decide({ rejected: true, shadow: true, approvalListed: true }).outcome).toBe("blocked");
    expect(decide({ ...operator, kind: "destroy", approvalListed: true, rejected: true }).outcome).toBe("blocked");
    expect(decide({ ...operator, kind: "stop", rejected: true }).outcome).toBe("act");
    expect(decide({ ...approval, rejected: true }).outcome).toBe("act");
  });

  it("shadow mode → proposed when no human decided, also what would have asked one (it files nothing)", () => {
    expect(decide({ shadow: true })).toMatchObject({ gate: "shadow mode", outcome: "proposed", humanNeeded: [] });
    expect(decide({ decidedBy: "rules", shadow: true })).toMatchObject({ outcome: "proposed" });
    expect(decide({ kind: "destroy", shadow: true, approvalListed: true })).toMatchObject({
      outcome: "proposed",
      humanNeeded: ["approval list"],
    });
  });

  it("shadow mode leaves a human's own action as it is: an operator's destroy files its approval, their stop acts, an approval carried out acts", () => {
    expect(decide({ ...operator, kind: "destroy", shadow: true, approvalListed: true }).outcome).toBe("approval");
    expect(decide({ ...operator, kind: "stop", shadow: true }).outcome).toBe("act");
    expect(decide({ ...approval, kind: "destroy", shadow: true, approvalListed: true }).outcome).toBe("act");
  });

  it("needs a human → approval: the approval list, the spend limit on a kind that adds spend, the caller asking (blast radius), two-person for an operator", () => {
    expect(decide({ kind: "destroy", approvalListed: true })).toMatchObject({
      gate: "needs a human",
      outcome: "approval",
      humanNeeded: ["approval list"],
    });
    expect(decide({ kind: "start", overSpendLimit: true, addsSpend: true })).toMatchObject({
      outcome: "approval",
      humanNeeded: ["spend limit"],
    });
    expect(decide({ kind: "replace", decidedBy: "rules", overSpendLimit: true, addsSpend: true }).outcome).toBe("approval");
    expect(decide({ kind: "stop", overSpendLimit: true }).outcome).toBe("act"); // stopping adds no spend
    // A reboot adds spend only from a state that does not bill (the fact says which).
    expect(decide({ kind: "reboot", decidedBy: "rules", overSpendLimit: true, addsSpend: true }).outcome).toBe("approval");
    expect(decide({ kind: "reboot", decidedBy: "rules", overSpendLimit: true }).outcome).toBe("act");
    expect(decide({ callerAsks: "nothing in this run's input concerns sim-2" })).toMatchObject({
      outcome: "approval",
      humanNeeded: ["caller asks"],
    });
    expect(decide({ ...operator, kind: "destroy", twoPerson: true })).toMatchObject({ outcome: "approval", humanNeeded: ["two-person"] });
    // A human is exempt from the spend limit and the blast radius; the approval carried out needs nothing more.
    expect(decide({ ...operator, kind: "start", overSpendLimit: true, addsSpend: true, callerAsks: "x" }).outcome).toBe("act");
    expect(decide({ ...approval, kind: "destroy", approvalListed: true, twoPerson: true, overSpendLimit: true }).outcome).toBe("act");
    expect(decide({ decidedBy: "human", kind: "destroy", approvalListed: true }).outcome).toBe("act");
  });

  it("fleet breaker open → approval for remediation a rule or the model decided; a human's own action goes", () => {
    expect(decide({ kind: "reboot", decidedBy: "rules", fleetBreakerOpen: true })).toMatchObject({
      gate: "fleet breaker open",
      outcome: "approval",
      humanNeeded: ["fleet breaker"],
    });
    for (const kind of ["start", "replace", "destroy"] as const)
      expect(decide({ kind, fleetBreakerOpen: true }).gate).toBe("fleet breaker open");
    expect(decide({ kind: "stop", fleetBreakerOpen: true }).outcome).toBe("act"); // stopping spends nothing
    expect(decide({ ...operator, kind: "reboot", fleetBreakerOpen: true }).outcome).toBe("act");
    expect(decide({ ...approval, kind: "destroy", fleetBreakerOpen: true }).outcome).toBe("act");
    expect(decide({ kind: "reboot", fleetBreakerOpen: true, shadow: true }).outcome).toBe("proposed");
  });

  it("act → act when no gate above holds", () => {
    expect(decide({})).toEqual({ gate: "act", outcome: "act", humanNeeded: [] });
    expect(humanNeeded(quiet)).toEqual([]);
  });

  it("a new row is a new rule: the first that holds decides", () => {
    const gates = [{ name: "never on fridays", when: () => true, outcome: "blocked" as const, doc: "x" }, ...GATES];
    expect(decideAction(quiet, gates)).toMatchObject({ gate: "never on fridays", outcome: "blocked" });
  });

  it("renders as a markdown table, one line per gate in order", () => {
    const lines = renderGateTable()
      .split("\n")
      .filter((l) => /^\| \d/.test(l));
    expect(lines.map((l) => l.split(" | ")[1])).toEqual(GATES.map((g) => g.name));
  });
});
