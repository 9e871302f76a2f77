/**
 * Status badges: the status is always written as text (colour only repeats it), so nothing is
 * conveyed by colour alone.
 */
type Tone = "ok" | "warn" | "bad" | "info" | "neutral";

export const Badge = ({ tone, children }: { tone: Tone; children: string }) => <span class={`badge ${tone}`}>{children}</span>;

const RUN_TONES: Record<string, Tone> = { running: "info", succeeded: "ok", failed: "bad", crashed: "bad", skipped: "neutral" };
const INSTANCE_TONES: Record<string, Tone> = {
  running: "ok",
  loading: "info",
  created: "info",
  rebooting: "info",
  stopped: "neutral",
  exited: "bad",
  frozen: "warn",
  offline: "bad",
  unknown: "warn",
};
const WAKE_TONES: Record<string, Tone> = { pending: "info", consumed: "ok", cancelled: "neutral" };
const APPROVAL_TONES: Record<string, Tone> = { pending: "warn", approved: "ok", rejected: "neutral" };
const SEVERITY_TONES: Record<string, Tone> = { info: "info", warning: "warn", critical: "bad" };

export const RunStatus = ({ status }: { status: string }) => <Badge tone={RUN_TONES[status] ?? "neutral"}>{status}</Badge>;
export const InstanceStateBadge = ({ state }: { state: string }) => <Badge tone={INSTANCE_TONES[state] ?? "warn"}>{state}</Badge>;
export const WakeStatus = ({ status }: { status: string }) => <Badge tone={WAKE_TONES[status] ?? "neutral"}>{status}</Badge>;
export const ApprovalStatus = ({ status }: { status: string }) => <Badge tone={APPROVAL_TONES[status] ?? "neutral"}>{status}</Badge>;
export const Severity = ({ severity }: { severity: string }) => <Badge tone={SEVERITY_TONES[severity] ?? "neutral"}>{severity}</Badge>;

export function NoopBadge({ noop }: { noop: boolean | null }) {
  if (noop === null) return null;
  return noop ? <Badge tone="neutral">no-op</Badge> : <Badge tone="info">replied or acted</Badge>;
}
