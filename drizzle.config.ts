import { defineConfig } from "drizzle-kit";
import { CASING } from "./db/casing.ts";

export default defineConfig({
  dialect: "turso",
  schema: "./schema/index.ts",
  out: "./db/migrations",
  casing: CASING,
  dbCredentials: {
    url: process.env.DATABASE_URL || "file:./data/fleetwarden.db",
    authToken: process.env.DATABASE_AUTH_TOKEN || undefined,
  },
});
