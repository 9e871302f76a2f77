/**
 * On the Worker a run's trace is sent after the delivery has answered, so the route must hand the
 * export to the execution context's `waitUntil` (jobs/keep-alive.ts), or the isolate may drop it.
 * The app is driven as the Worker drives it (`app.fetch` with an execution context) with a signed
 * QStash run delivery; without an execution context (Node) the export runs on by itself.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../functions/app.ts";
import { ingestEvent } from "../../pipeline/index.ts";
import { OtlpTracer } from "../../runtime/otlp-tracer.ts";
import { silentLogger } from "../support/silent-logger.ts";
import { deliveryRequest, startFakeQStash, type FakeQStash } from "../qstash/fake-qstash.ts";
import { createQStashDeps } from "../qstash/qstash-deps.ts";
import { attributesOf, startOtlpReceiver, type OtlpReceiver } from "./otlp-receiver.ts";

let fake: FakeQStash;
let collector: OtlpReceiver;
beforeEach(async () => {
  fake = await startFakeQStash();
  collector = await startOtlpReceiver();
});
afterEach(async () => {
  await fake.close();
  await collector.close();
});

async function runDelivery() {
  const deps = await createQStashDeps(fake);
  deps.tracer = new OtlpTracer({ endpoint: collector.url, serviceName: "fleetwarden", captureContent: false }, deps.clock, silentLogger);
  await ingestEvent(deps, { agentId: "default", source: "human", priority: 0, dedupKey: "m1", payload: { text: "status?" } });
  deps.clock.advance(deps.config.debounceHumanMs);
  return { app: buildApp(() => deps), request: deliveryRequest(fake.messages[0]!) };
}

describe("a run's trace export outlives the delivery request", () => {
  it("is handed to the execution context's waitUntil (the Worker)", async () => {
    const { app, request } = await runDelivery();
    const waited: Promise<unknown>[] = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => void waited.push(p), passThroughOnException: () => {}, props: {} };
    const res = await app.fetch(request, {}, ctx);
    expect(await res.json()).toEqual({ result: "succeeded" });
    expect(waited).toHaveLength(1);
    await Promise.all(waited);
    expect(collector.received).toHaveLength(1);
    expect(attributesOf(collector.received[0]!.spans[0]!)).toMatchObject({ "fleetwarden.run.status": "succeeded" });
  });

  it("runs on by itself without an execution context (Node)", async () => {
    const { app, request } = await runDelivery();
    const res = await app.request(request);
    expect(await res.json()).toEqual({ result: "succeeded" });
    for (let i = 0; i < 100 && collector.received.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(collector.received).toHaveLength(1);
  });
});
