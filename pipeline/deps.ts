/**
 * What the pipeline needs from the outside: the database, the clock, the scheduler, configuration
 * and logging. Layers above add their own ports to it (fleet/deps.ts, agent/deps.ts); the full set
 * is composed once, in jobs/deps.ts. Functions take the part they use (`Pick<PipelineDeps, …>`).
 */
import type { Db } from "../db/client.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Config } from "../runtime/config.ts";
import type { Logger } from "../runtime/log.ts";
import type { Tracer } from "../runtime/trace.ts";
import type { LookupAll } from "../runtime/outbound-url.ts";
import type { Scheduler } from "./scheduler.ts";

export interface PipelineDeps {
  db: Db;
  clock: Clock;
  config: Config;
  scheduler: Scheduler;
  log: Logger;
  /** The host process's identity, written on the leases it takes (Node: machine + data dir). */
  hostId?: string;
  /**
   * Shares one database batch among ingests arriving together (the Node host); without it every
   * ingest commits its own batch (Workers, where a batch must belong to one request).
   */
  groupCommit?: GroupCommit;
  /** Traces of runs (runtime/trace.ts); absent, nothing is recorded (no OTEL_EXPORTER_OTLP_ENDPOINT). */
  tracer?: Tracer;
  /**
   * Keeps work going after the request that started it has answered (the Worker's `waitUntil`);
   * absent (Node), such a promise runs on by itself. Used for what must not delay a run: its trace export.
   */
  background?: (work: Promise<unknown>) => void;
  /**
   * The Node host's resolver (functions/host/node-resolver.ts, dns.lookup): an agent's channel URL
   * is resolved again where a notification is sent. Absent on Workers (no resolver; they cannot
   * reach private addresses).
   */
  resolveHost?: LookupAll;
}
