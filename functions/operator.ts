/** `npm run operator -- …`: the operator command (functions/host/operator-command.ts), one line on failure. */
import { runOperatorCommand } from "./host/operator-command.ts";
import { startupFailureLine } from "./host/startup-failure.ts";
import { withEnvFile } from "./host/env-file.ts";

try {
  console.log(await runOperatorCommand(process.argv.slice(2), withEnvFile(process.env)));
} catch (err) {
  console.error(startupFailureLine(err));
  process.exit(1);
}
