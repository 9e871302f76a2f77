/**
 * Every property test (fast-check) can be replayed from its seed: FC_SEED=<seed> runs the
 * properties with that seed instead of a fresh one, and a failing property's message ends with
 * the command that replays it. A property that pins its own `seed` keeps it. Loaded by
 * vitest.config.ts as a setup file, so a new property test needs nothing to get this.
 */
import fc from "fast-check";
import { expect } from "vitest";

const pinned = process.env.FC_SEED;
if (pinned !== undefined && !Number.isInteger(Number(pinned)))
  throw new Error(`FC_SEED must be an integer (it was ${JSON.stringify(pinned)})`);

fc.configureGlobal({
  ...(pinned === undefined ? {} : { seed: Number(pinned) }),
  reporter(details) {
    if (!details.failed) return;
    const file = expect.getState().testPath ?? "<test file>";
    const relative = file.startsWith(process.cwd()) ? file.slice(process.cwd().length + 1) : file;
    throw new Error(`${fc.defaultReportMessage(details)}\n\nReplay: FC_SEED=${details.seed} npx vitest run ${relative}`);
  },
});
