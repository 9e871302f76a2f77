/**
 * The one line a failed start (or operator command) prints: a ConfigError or HostLockError says what to fix; anything
 * unexpected is reduced to its first line (no stack trace), prefixed so it reads as a start-up failure.
 */
import { ConfigError } from "../../runtime/config.ts";
import { HostLockError } from "./host-lock.ts";
import { UsageError } from "./operator-command.ts";
import { OperatorError } from "../../auth/operators-store.ts";

export function startupFailureLine(err: unknown): string {
  if (err instanceof ConfigError || err instanceof HostLockError || err instanceof UsageError || err instanceof OperatorError)
    return err.message;
  const message = err instanceof Error ? err.message : String(err);
  return `fleetwarden could not start: ${message.split("\n")[0]}`;
}
