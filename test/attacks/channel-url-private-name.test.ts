/**
 * Attack: whoever may edit an agent points its channel URL at the deployment's own network by a
 * host name (one that resolves to loopback or a private address, as this machine's own name does
 * in /etc/hosts, a container's or a CI runner's) or by a NAT64 / 6to4 spelling of a private IPv4
 * (`[64:ff9b::7f00:1]` is 127.0.0.1 through a NAT64 gateway): the set-time check only reads the
 * host as written, so every notification (with its approval links) is POSTed inside.
 * Guard: runtime/outbound-url.ts refuses the NAT64 and 6to4 forms of private IPv4 where the URL is
 * set, and notify/deliver-notification.ts resolves an agent's own channel URL where it is sent
 * (the Node host's resolver, functions/host/node-resolver.ts: dns.lookup, every address) and fails the delivery unsent when any address is loopback,
 * private, link-local or NAT64-mapped, unless ALLOW_PRIVATE_URLS=true.
 */
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { nodeResolver } from "../../functions/host/node-resolver.ts";
import { deliverNotification } from "../../notify/deliver-notification.ts";
import { notifyHuman } from "../../notify/notify-human.ts";
import { privateHost } from "../../runtime/outbound-url.ts";
import { notificationDeliveries } from "../../schema/index.ts";
import { api } from "../replacement/support.ts";
import { createTestDeps } from "../support/test-deps.ts";
import { scopedDeps, setSettings } from "./support.ts";

describe("a channel URL that reaches a private address", () => {
  it.each([
    "https://[64:ff9b::7f00:1]/hook",
    "https://[64:ff9b::a00:1]/hook",
    "https://[64:ff9b:1::c0a8:101]/",
    "https://[2002:7f00:1::]/",
  ])("%s is refused where it is set", async (url) => {
    const deps = await createTestDeps();
    const res = await api(deps, "/api/agents/default", {
      method: "PATCH",
      body: JSON.stringify({ settings: { channels: { slack: url } } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/settings\.channels\.slack: must point to a public host/);
  });

  it("a public NAT64 address is not refused for its form", () => {
    expect(privateHost("[64:ff9b::808:808]")).toBe(false);
  });

  it("a host name that resolves to a private address is refused where it is sent: the delivery fails unsent", async () => {
    const name = hostname();
    const addresses = await lookup(name, { all: true });
    // This machine's own name resolves to loopback or a private address (/etc/hosts, a container's bridge, a CI runner's LAN).
    expect(addresses.some(({ address }) => privateHost(address.includes(":") ? `[${address}]` : address))).toBe(true);
    const deps = await createTestDeps();
    await setSettings(deps, "default", { channels: { slack: `https://${name}:9/hook` } });
    // The Node host's resolver, as functions/host/node-host.ts wires it.
    const scoped = { ...(await scopedDeps(deps)), resolveHost: nodeResolver };
    await notifyHuman(scoped, { agentId: "default", runId: null, title: "sim-1 down", body: "no heartbeat", severity: "warning" });
    const [delivery] = await deps.db.select().from(notificationDeliveries);
    await deliverNotification(scoped, delivery!.id);
    const [after] = await deps.db.select().from(notificationDeliveries);
    expect(after).toMatchObject({ status: "failed", attempts: 1 });
    expect(after!.lastError).toMatch(new RegExp(`${name} resolves to .*ALLOW_PRIVATE_URLS`));
  });
});
