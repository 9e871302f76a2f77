/**
 * The scheduler contract both adapters honour (local: deliveries table + timer; qstash: Upstash):
 * a message is delivered no earlier than `notBefore`, at least once, retried with backoff until
 * its handler succeeds. A second publish with the same dedup key is dropped **within 10 minutes**
 * of the first — QStash's deduplication window (upstash/docs qstash/features/deduplication.mdx);
 * the local scheduler keeps a key as long as its row (days), but nothing may rely on more than 10
 * minutes. Dedup only saves work: every handler in jobs/deliver.ts is idempotent, so a
 * duplicate delivered after the window (or by at-least-once delivery) changes nothing.
 */
export type DeliveryBody =
  /** Claim and perform the run scheduled in debounce slot `slot`. */
  | { type: "run"; agentId: string; slot: number }
  /** A wake is due: request a run if it is still pending. */
  | { type: "wake"; agentId: string; wakeId: number }
  /** Send one notification delivery to its outbound channel. */
  | { type: "notify"; agentId: string; deliveryId: number }
  /** One agent's cron tick (published by the fan-out in jobs/tick.ts). */
  | { type: "tick"; agentId: string }
  /**
   * An Approve/Reject click from Slack, decided after the click was acknowledged
   * (jobs/slack-interaction.ts); `responseUrl` is the interaction's, already checked to be Slack's.
   */
  | {
      type: "slack-decision";
      agentId: string;
      approvalId: number;
      decision: "approve" | "reject";
      slackUser: string;
      responseUrl: string | null;
    };

export interface PublishRequest {
  dedupKey: string;
  /** ms epoch; deliver no earlier than this. */
  notBefore: number;
  body: DeliveryBody;
}

export interface Scheduler {
  readonly kind: "local" | "qstash" | "test";
  publish(request: PublishRequest): Promise<void>;
  /**
   * Publishes several messages in as few requests as the adapter can (QStash: its batch
   * endpoint). Optional: a scheduler without it publishes one by one (see publishAll).
   */
  publishMany?(requests: readonly PublishRequest[]): Promise<void>;
}

/** Publishes every request, batched when the scheduler can batch. */
export async function publishAll(scheduler: Scheduler, requests: readonly PublishRequest[]): Promise<void> {
  if (requests.length === 0) return;
  if (scheduler.publishMany) return scheduler.publishMany(requests);
  await Promise.all(requests.map((request) => scheduler.publish(request)));
}
