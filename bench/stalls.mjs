/**
 * Names what ran during each event-loop stall a benchmarked host recorded (bench/host-profile.mjs):
 * `node bench/stalls.mjs <dir> [min ms]` reads every host-<pid>.cpuprofile and .loop.json pair
 * there and prints, per stall over `min ms` (default 100), the functions of this project that
 * were on the stack for most of its samples (`ALL_FRAMES=1`: dependencies' and Node's too).
 * A bench tool only.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
const minMs = Number(process.argv[3] ?? 100);
const own = (url) => url.includes("/work/") && !url.includes("node_modules");

for (const file of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8"));
  const { stalls = [], maxMs, p99Ms } = JSON.parse(readFileSync(join(dir, file.replace(".cpuprofile", ".loop.json")), "utf8"));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const times = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((t += delta));
  const frame = (n) =>
    `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.split("/").slice(-2).join("/")}:${n.callFrame.lineNumber + 1}`;
  console.log(
    `\n# ${file}: loop delay p99 ${p99Ms} ms, max ${maxMs} ms, ${stalls.filter((s) => s.ms >= minMs).length} stalls ≥ ${minMs} ms`,
  );
  for (const stall of stalls
    .filter((s) => s.ms >= minMs)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 8)) {
    const from = stall.endUs - stall.ms * 1000;
    const counts = new Map();
    let samples = 0;
    for (let i = 0; i < times.length; i++) {
      if (times[i] < from || times[i] > stall.endUs) continue;
      samples++;
      const seen = new Set();
      for (let id = profile.samples[i]; id; id = parent.get(id)) {
        const n = byId.get(id);
        const k =
          process.env.ALL_FRAMES || own(n.callFrame.url)
            ? frame(n)
            : n.callFrame.functionName.startsWith("(")
              ? n.callFrame.functionName
              : null;
        if (k && !seen.has(k)) seen.add(k), counts.set(k, (counts.get(k) ?? 0) + 1);
      }
    }
    console.log(`\n## ${stall.ms} ms stall (${samples} samples)`);
    for (const [k, c] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(`  ${String(c).padStart(4)}  ${k}`);
  }
}
