/**
 * Node only: with no configuration, `npm start` still runs. A missing ADMIN_TOKEN or
 * WEBHOOK_SECRET is generated on first start, stored next to the database (mode 0600) and
 * printed once; later starts read the stored value.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

export interface StoredSecret {
  value: string;
  /** True when this start generated it (print it once). */
  generated: boolean;
  path: string;
}

export function loadOrCreateSecret(dir: string, file: string, make: () => string): StoredSecret {
  const path = join(dir, file);
  if (existsSync(path)) return { value: readFileSync(path, "utf8").trim(), generated: false, path };
  mkdirSync(dir, { recursive: true });
  const value = make();
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return { value, generated: true, path };
}

export const makeAdminToken = () => `fw_${randomBytes(24).toString("base64url")}`;
export const makeWebhookSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
