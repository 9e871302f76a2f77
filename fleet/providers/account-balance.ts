/**
 * What each provider answers when asked for the account's credit balance (issue 33, item 7), so
 * the balance check (fleet/economics/balance-check.ts) can warn before the money runs out —
 * RunPod stops every pod of an account whose balance reaches zero.
 *
 * - Vast.ai: vast-cli `show user` is `GET /api/v0/users/current/` (vast-ai/vast-cli fea8ca1e,
 *   vast.py `show__user`, "user balance"); the answer's `credit` (vast.py `user_fields`, "Credit")
 *   is the account's balance in USD.
 * - RunPod: `query { myself { clientBalance } }` over the GraphQL endpoint: the user's
 *   `clientBalance` in USD, as RunPod's docs show it (`runpodctl user`,
 *   https://docs.runpod.io/runpodctl/reference/runpodctl-user). runpod-python has no balance query.
 * - Lambda Cloud: its public API (cloud.lambdalabs.com/api/v1) has no balance or billing
 *   endpoint, so LambdaProvider has no `balance` and the check skips it.
 * - The simulator: a settable figure (SimulatorProvider.balanceUsd).
 */
import { z } from "zod";

export const VAST_CURRENT_USER_PATH = "/api/v0/users/current/";
export const vastCurrentUser = z.object({ credit: z.number() }).passthrough();

export const MY_BALANCE = "query myBalance { myself { clientBalance } }";
export const runpodBalance = z.object({ myself: z.object({ clientBalance: z.number() }) });
