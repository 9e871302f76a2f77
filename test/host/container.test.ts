/**
 * The container image and the box files (Dockerfile, docs/box/): Docker is not available where the
 * tests run, so the Dockerfile is linted with dockerfile-utils (the parser behind VS Code's Docker
 * support) and held to what docs/box.md promises: small base, non-root, data on a volume, a
 * healthcheck on /healthz, the host listening beyond loopback, and no secrets or database copied in.
 */
import { readFileSync } from "node:fs";
import { validate } from "dockerfile-utils";
import { describe, expect, it } from "vitest";

const dockerfile = readFileSync("Dockerfile", "utf8");
const instructions = dockerfile
  .replace(/\\\n\s*/g, " ")
  .split("\n")
  .filter((line) => line.trim() && !line.trimStart().startsWith("#"));
const of = (keyword: string) => instructions.filter((line) => line.startsWith(`${keyword} `));

describe("the Dockerfile", () => {
  it("is valid for Docker's parser", () => {
    expect(validate(dockerfile).map((problem) => problem.message)).toEqual([]);
  });

  it("runs as a non-root user with its data on a volume and the database there", () => {
    expect(of("FROM")).toEqual([expect.stringMatching(/^FROM node:20-slim$/)]);
    expect(of("USER").at(-1)).toBe("USER node");
    expect(of("VOLUME").join(" ")).toContain("/data");
    expect(dockerfile).toMatch(/DATABASE_URL=file:\/data\//);
    expect(dockerfile).toMatch(/HOST=0\.0\.0\.0/);
  });

  it("checks its health on /healthz and starts the Node host", () => {
    expect(of("HEALTHCHECK").join(" ")).toMatch(/\/healthz/);
    expect(of("CMD").at(-1)).toBe('CMD ["npm", "start"]');
  });

  it("copies no database, secret or dependency tree into the image", () => {
    const ignored = readFileSync(".dockerignore", "utf8").split("\n");
    for (const path of ["data", ".env", ".dev.vars", "node_modules", ".git"]) expect(ignored).toContain(path);
  });
});

describe("the box examples", () => {
  it("the systemd unit reads its settings through ENV_FILE and keeps the database in its state directory", () => {
    const unit = readFileSync("docs/box/fleetwarden.service", "utf8");
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/npm start$/m);
    expect(unit).toMatch(/^Environment=ENV_FILE=/m);
    expect(unit).toMatch(/^StateDirectory=fleetwarden$/m);
    expect(unit).toMatch(/^Environment=DATABASE_URL=file:\/var\/lib\/fleetwarden\//m);
  });

  it("the compose example publishes only the TLS proxy, which forwards to the host", () => {
    const compose = readFileSync("docs/box/compose.yaml", "utf8");
    const caddy = readFileSync("docs/box/Caddyfile", "utf8");
    expect(compose).toMatch(/"443:443"/);
    expect(compose.split("caddy:")[0]).not.toMatch(/ports:/);
    expect(caddy).toMatch(/reverse_proxy fleetwarden:8787/);
    expect(compose).toMatch(/TRUST_PROXY: x-forwarded-for/);
  });
});
