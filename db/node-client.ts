/**
 * Node's libSQL client: an embedded file (its directory created) or `:memory:`, or a remote URL.
 * WAL and a busy timeout let the local scheduler and request handlers share one file.
 */
import { createClient, type Client } from "@libsql/client";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

export async function createNodeClient(url: string, authToken?: string): Promise<Client> {
  if (url.startsWith("file:")) {
    const path = url.startsWith("file://") ? fileURLToPath(url) : url.slice("file:".length);
    mkdirSync(dirname(path), { recursive: true });
  }
  const client = createClient({ url, authToken });
  if (url.startsWith("file:")) {
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("PRAGMA busy_timeout = 5000");
  }
  return client;
}
