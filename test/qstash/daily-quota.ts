/**
 * The QStash fake's daily message quota, as Upstash documents and bills it:
 * - upstash/docs `qstash/api/api-ratelimiting.mdx` (commit e718318ab6bb67b019b66d0a54ffe9218feb4700,
 *   the last version that describes it): a **daily** limit on publish-related endpoints (publish,
 *   enqueue, batch); past it the API answers 429 with `RateLimit-Limit` (allowed per day),
 *   `RateLimit-Remaining` (left today) and `RateLimit-Reset` (unix timestamp when it resets).
 * - upstash/qstash-js `src/client/http.ts` `checkResponse` and `src/client/error.ts` (commit
 *   81d951b5d5971deeba18ca21d0d6e4f4b903608e): a 429 carrying `RateLimit-Limit` becomes
 *   `QstashDailyRatelimitError` built from those three headers alone (`limit`, `remaining`,
 *   `reset`); its body is not read, so the fake answers the JSON `{error}` of its other refusals.
 * - Upstash's pricing FAQ (https://upstash.com/docs/qstash/overall/pricing.md): "Each delivery
 *   attempt counts as one message": the initial delivery counts once and each retry once more;
 *   the free plan allows 1,000 messages a day.
 *
 * How the fake applies that: a message is charged when it is enqueued (its first attempt) and again
 * at each retry; a deduplicated publish enqueues nothing and costs nothing. A publish or batch whose
 * new messages do not fit in what is left today is refused whole. Already enqueued messages are
 * still delivered (Upstash only documents refusing new requests), and their retries are charged
 * even past the limit. The day is the UTC day of the fake's clock; `reset()` starts a new one now
 * (for tests that run on real time).
 */
const DAY_MS = 86_400_000;

export interface DailyQuota {
  /** Messages allowed per day (Infinity: no limit). */
  limit: number;
  /** Messages charged today. */
  readonly usedToday: number;
  /** Messages charged since the fake started, every day together. */
  readonly charged: number;
  /** Charges `n` messages now (enqueued, a retry, a callback). */
  charge(n: number): void;
  /** The 429 answer when `n` new messages do not fit today, else null. */
  refusal(n: number): { status: 429; headers: Record<string, string>; json: { error: string } } | null;
  /** Starts a new quota day now: today's count goes back to 0. */
  reset(): void;
}

export function dailyQuota(now: () => number, limit = Infinity): DailyQuota {
  let day = Math.floor(now() / DAY_MS);
  let used = 0;
  let charged = 0;
  /** Today's count, after rolling over to a new UTC day if the clock crossed midnight. */
  const today = () => {
    const current = Math.floor(now() / DAY_MS);
    if (current !== day) {
      day = current;
      used = 0;
    }
    return used;
  };
  return {
    limit,
    get usedToday() {
      return today();
    },
    get charged() {
      return charged;
    },
    charge(n) {
      today();
      used += n;
      charged += n;
    },
    refusal(n) {
      const left = this.limit - today();
      if (n <= left) return null;
      return {
        status: 429,
        headers: {
          "RateLimit-Limit": String(this.limit),
          "RateLimit-Remaining": String(Math.max(0, left)),
          "RateLimit-Reset": String(((day + 1) * DAY_MS) / 1000),
        },
        json: { error: `daily message limit of ${this.limit} reached` },
      };
    },
    reset() {
      today();
      used = 0;
    },
  };
}
