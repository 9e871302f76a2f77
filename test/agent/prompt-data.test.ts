/**
 * Cutting a prompt part to a small room (agent/prompt/prompt-data.ts fitDataInPlace): when the room is
 * too small to close a data block, the run's own opening words are kept, cut like any text, and
 * no block is left open; an empty cut is never taken while the room fits a marker.
 */
import { describe, expect, it } from "vitest";
import { fitDataInPlace } from "../../agent/prompt/prompt-data.ts";
import { countText } from "../../agent/prompt/tokens.ts";

const input = `Run 1 at 2026-12-01T00:00:00.000Z. This run was woken by:\n<events>\n${Array.from({ length: 60 }, (_, i) => JSON.stringify({ id: i, message: "sim-1 exited with code 1" })).join("\n")}\n</events>`;

describe("fitDataInPlace at small rooms", () => {
  it("keeps the opening words and leaves no block open when the room cannot hold a closed block", () => {
    for (const room of [30, 40, 47]) {
      const cut = fitDataInPlace(input, room, "input");
      expect(countText(cut)).toBeLessThanOrEqual(room);
      expect(cut.startsWith("Run 1")).toBe(true);
      expect(cut.includes("<events>")).toBe(cut.includes("</events>"));
    }
  });

  it("with room for a closed block, cuts inside it and closes it", () => {
    const cut = fitDataInPlace(input, 200, "input");
    expect(countText(cut)).toBeLessThanOrEqual(200);
    expect(cut).toMatch(/^Run 1/);
    expect(cut.trimEnd().endsWith("</events>")).toBe(true);
  });
});
