/**
 * The scheduler contract both adapters honour (local: deliveries table + timer; qstash: Upstash):
 * a message is delivered no earlier than `notBefore`, at least once, retried with backoff until
 * its handler succeeds; a second publish with the same dedup key is dropped. Handlers therefore
 * must be idempotent, and every one in triggers/deliver.ts is.
 */
export type DeliveryBody =
  /** Claim and perform the run scheduled in debounce slot `slot`. */
  | { type: "run"; agentId: string; slot: number }
  /** A wake is due: request a run if it is still pending. */
  | { type: "wake"; agentId: string; wakeId: number }
  /** Send one notification delivery to its outbound channel. */
  | { type: "notify"; deliveryId: number };

export interface PublishRequest {
  dedupKey: string;
  /** ms epoch; deliver no earlier than this. */
  notBefore: number;
  body: DeliveryBody;
}

export interface Scheduler {
  readonly kind: "local" | "qstash" | "test";
  publish(request: PublishRequest): Promise<void>;
}
