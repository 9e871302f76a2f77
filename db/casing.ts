/** One casing setting, shared by the client and drizzle-kit so generated SQL matches queries. */
export const CASING = "snake_case" as const;
