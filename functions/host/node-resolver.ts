/**
 * The Node host's resolver for outbound URLs (pipeline/deps.ts `resolveHost`): dns.lookup with
 * every address, /etc/hosts included, as the request itself would resolve the name. Node's API,
 * so it lives with the Node host; Workers have none.
 */
import { lookup } from "node:dns/promises";
import type { LookupAll } from "../../runtime/outbound-url.ts";

export const nodeResolver: LookupAll = (hostname) => lookup(hostname, { all: true, verbatim: true });
