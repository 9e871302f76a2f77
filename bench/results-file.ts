/**
 * Writes one benchmark's own section of bench/RESULTS.md (from its heading to the next `## `
 * heading), leaving every other section as it is. A section not there yet goes before the
 * heading `insertBefore` names, or at the end.
 */
import { readFileSync, writeFileSync } from "node:fs";

export function writeSection(heading: string, section: string, insertBefore?: string): void {
  const path = new URL("./RESULTS.md", import.meta.url);
  const current = readFileSync(path, "utf8");
  const found = current.indexOf(heading);
  const at = found >= 0 ? found : insertBefore ? current.indexOf(insertBefore) : -1;
  const next = found >= 0 ? current.indexOf("\n## ", found + heading.length) : at;
  const before = at >= 0 ? current.slice(0, at).trimEnd() : current.trimEnd();
  const after = next >= 0 ? `\n${current.slice(next).trimStart().trimEnd()}\n` : "";
  writeFileSync(path, `${before}\n\n${section.trimEnd()}\n${after}`);
}
