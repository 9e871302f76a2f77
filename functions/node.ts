/** `npm start`: the Node host. Starts it and stops it gracefully on SIGTERM/SIGINT. */
import { startNodeHost } from "./host/node-host.ts";
import { ConfigError } from "../runtime/config.ts";

try {
  const host = await startNodeHost(process.env);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => void host.stop().then(() => process.exit(0)));
  }
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
}
