/**
 * Attack: a deployment started with a 1-character Slack or Vast.ai signing secret (a typo, a
 * placeholder) accepts clicks and notifications anyone can sign by trying a few keys; with
 * `TRUST_PROXY=host` every client picks its own throttling address by sending a Host header, so
 * the sign-in lockout never bites.
 * Guard: the settings rows (runtime/settings/rows-access.ts) refuse them at start: both signing
 * secrets need at least 16 characters (Slack's are 32 hex characters), and TRUST_PROXY takes only
 * a header that carries a client address (x-forwarded-for, x-real-ip, cf-connecting-ip,
 * true-client-ip, fly-client-ip, x-client-ip, x-cluster-client-ip), never `host` or another header.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../runtime/config.ts";

describe("weak access settings at start", () => {
  it.each(["SLACK_SIGNING_SECRET", "VAST_WEBHOOK_SECRET"])("%s of 1 or 15 characters is refused, 16 accepted", (name) => {
    expect(() => parseConfig({ [name]: "x" }, "node")).toThrow(new RegExp(`${name}.*at least 16 characters`));
    expect(() => parseConfig({ [name]: "x".repeat(15) }, "node")).toThrow(new RegExp(name));
    expect(() => parseConfig({ [name]: "8f742231b10e8888" }, "node")).not.toThrow();
  });

  it.each(["host", "Host", "user-agent", "x-forwarded-host", "cookie"])("TRUST_PROXY=%s is refused", (header) => {
    expect(() => parseConfig({ TRUST_PROXY: header }, "node")).toThrow(/TRUST_PROXY.*carries the client's address/);
  });

  it.each(["x-forwarded-for", "X-Real-IP", "cf-connecting-ip", "true-client-ip", "fly-client-ip"])(
    "TRUST_PROXY=%s is accepted",
    (header) => {
      expect(parseConfig({ TRUST_PROXY: header }, "node").trustProxyHeader).toBe(header.toLowerCase());
    },
  );
});
