/** `npm run db:migrate`: applies the committed migrations to DATABASE_URL (file or Turso). */
import { openDatabase } from "./client.ts";
import { applyMigrations } from "./migrate.ts";
import { createNodeClient } from "./node-client.ts";
import { parseConfig } from "../runtime/config.ts";

const config = parseConfig(process.env, "node");
const client = await createNodeClient(config.databaseUrl, config.databaseAuthToken);
await applyMigrations(openDatabase(client));
console.log(`Migrations applied to ${config.databaseUrl.replace(/\?.*$/, "")}`);
client.close();
