/**
 * What the CLI's exit status means, so a script can branch on it without parsing text: the HTTP
 * answer's class, not its wording. The README's CLI section prints this table.
 */
export const EXIT = {
  /** Done (or, for `diff`, nothing would change). */
  ok: 0,
  /** fleetwarden could not be reached, or answered 5xx. */
  unreachable: 1,
  /** The command line itself is wrong: unknown command, missing argument, unreadable policy file. */
  usage: 2,
  /** No token, a bad one, or a role that may not do this (401/403). */
  unauthorised: 3,
  /** No such agent, instance, approval (404). */
  notFound: 4,
  /** Refused: bad input or a conflict (other 4xx; the message names the problem). */
  refused: 5,
  /** Accepted but waiting for a human: the action became an approval (202). */
  pendingApproval: 6,
  /** `diff`: the policy file differs from the agent's settings. */
  differs: 7,
  /** `status`: the agent's watchdog has a condition (it needs a human's look). */
  attention: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code an HTTP status maps to. */
export function exitForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.unauthorised;
  if (status === 404) return EXIT.notFound;
  if (status >= 500) return EXIT.unreachable;
  if (status >= 400) return EXIT.refused;
  return EXIT.ok;
}
