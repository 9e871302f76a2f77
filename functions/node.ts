/**
 * `npm start`: the Node host (its environment plus `.env`, functions/host/env-file.ts). Starts it and stops it gracefully on SIGTERM/SIGINT; a start-up
 * failure is one line on stderr and exit code 1, never a stack trace. The signal handlers are in
 * place before start-up begins: a signal that arrives while it runs (or right after "running" is
 * printed) stops the host once it has started, instead of killing the process mid-way.
 */
import { startupFailureLine } from "./host/startup-failure.ts";
import { startNodeHost } from "./host/node-host.ts";
import { withEnvFile } from "./host/env-file.ts";

const signalled = new Promise<void>((resolve) => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => resolve());
});

try {
  const host = await startNodeHost(withEnvFile(process.env));
  void signalled.then(() => host.stop()).then(() => process.exit(0));
} catch (err) {
  console.error(startupFailureLine(err));
  process.exit(1);
}
