/**
 * `npm start`: the Node host. Starts it and stops it gracefully on SIGTERM/SIGINT; a start-up
 * failure is one line on stderr and exit code 1, never a stack trace.
 */
import { startupFailureLine } from "./host/startup-failure.ts";
import { startNodeHost } from "./host/node-host.ts";

try {
  const host = await startNodeHost(process.env);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => void host.stop().then(() => process.exit(0)));
  }
} catch (err) {
  console.error(startupFailureLine(err));
  process.exit(1);
}
