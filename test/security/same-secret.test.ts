/** sameSecret: the credential comparison every bearer request makes (auth/secrets.ts). */
import { describe, expect, it } from "vitest";
import { sameSecret } from "../../auth/secrets.ts";

describe("sameSecret", () => {
  const secret = "admin-token-0123456789abcdef";
  it("accepts only the same string", async () => {
    expect(await sameSecret(secret, secret)).toBe(true);
    expect(await sameSecret(`${secret}`.slice(0), secret)).toBe(true);
    expect(await sameSecret(`${secret.slice(0, -1)}0`, secret)).toBe(false);
    expect(await sameSecret(`x${secret.slice(1)}`, secret)).toBe(false);
    expect(await sameSecret(secret.slice(0, -1), secret)).toBe(false);
    expect(await sameSecret(secret + secret, secret)).toBe(false);
    expect(await sameSecret(`${secret}a`, secret)).toBe(false);
  });
  it("refuses empty or missing values, even when both are empty", async () => {
    expect(await sameSecret("", "")).toBe(false);
    expect(await sameSecret(undefined, secret)).toBe(false);
    expect(await sameSecret(secret, null)).toBe(false);
  });
});
