import { defineConfig } from "vitest/config";

/**
 * Most of the suite's CPU went to importing the app again in a fresh fork for every test file
 * (about three quarters of it). Test files that keep no state in shared modules therefore run in
 * the "shared" project: each worker keeps its module cache from one file to the next
 * (`isolate: false`); every test still builds its own database, clock and servers.
 *
 * The "isolated" project keeps one fresh fork per file, for files that cannot share:
 * - test/worker/** and *worker*.test.ts: the Workers entry (functions/host/worker-host.ts) keeps
 *   its dependencies in module state, built once per isolate from the first env it sees;
 * - test/browser/**: Chromium and a Node host per file, where a fresh process costs little;
 * - test/simulation/**: the longest files (the pipeline shards take minutes each). Vitest's
 *   sequencer orders the "isolated" project's files before "shared"'s, so these start first, not
 *   last with one core waiting on them at the end. Their import is a few seconds of their
 *   minutes, so their fresh forks cost little;
 * - *.isolated.test.ts: the way out for a new file that needs its own process.
 * A new test file lands in "shared" by default; give it one of these names if it must not.
 */
const isolated = [
  "test/worker/**/*.test.ts",
  "test/**/*worker*.test.ts",
  "test/browser/**/*.test.ts",
  "test/simulation/**/*.test.ts",
  "test/**/*.isolated.test.ts",
];
const all = ["test/**/*.test.ts", "test/**/*.test.tsx"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The simulation is split into shard files; let both cores of a small CI machine work.
    maxWorkers: 2,
    // Spies on console and the like end with their test, so none leaks into the next file of a shared worker.
    restoreMocks: true,
    // Property tests take FC_SEED and print how to replay a failure (test/support/fast-check-seed.ts).
    setupFiles: ["test/support/fast-check-seed.ts"],
    projects: [
      { extends: true, test: { name: "shared", include: all, exclude: isolated, isolate: false } },
      { extends: true, test: { name: "isolated", include: isolated, isolate: true } },
    ],
  },
});
