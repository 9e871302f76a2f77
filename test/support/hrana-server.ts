/**
 * A Hrana-over-HTTP test double of Turso (test support only, never part of the product): what
 * `@libsql/client/web` talks to on Workers, served on loopback over an embedded libSQL file.
 *
 * Written from the protocol specification, tursodatabase/libsql `docs/HRANA_3_SPEC.md` ("Hrana over
 * HTTP", "Shared structures") at commit f8fb14f3638e44edf3dbace489618c7768daee55, with the error
 * answers of the reference server at that commit (libsql-server/src/hrana/http/{mod,stream,
 * request}.rs): `POST /v2/pipeline` and `POST /v3/pipeline` (JSON) with `execute`, `batch` (step
 * conditions ok/error/not/and/or, and is_autocommit on v3), `sequence`, `store_sql`/`close_sql`
 * (per stream, at most 50 texts of 5 KB), `get_autocommit` (v3), `close`; `GET /v2` and `GET /v3`
 * answer 200 (version checks). Not served: protobuf, `/v3/cursor`, `describe` — a client asking
 * for them gets 404 / 400 as from a server without them (the JS client then falls back to v2 JSON).
 *
 * Streams: one embedded connection each (so a transaction stays on its stream), addressed by a
 * baton — 48 bytes, stream id + sequence + HMAC-SHA256, base64 without padding, as the reference
 * server makes it. Every answer carries a new baton; an old, forged or closed stream's baton is a
 * 400, and a stream idle for `streamIdleMs` expires (400 JSON `STREAM_EXPIRED`), rolling back what
 * it left open. With `authToken` set, a request without `Authorization: Bearer <token>` is a 401.
 *
 * It counts HTTP requests (`requests`), which is what a Worker pays in subrequests, and fills each
 * StmtResult's `rows_read` / `rows_written` as Turso bills them (test/support/turso-rows.ts says
 * what is exact and what estimated), summed per SQL text in `rows`.
 *
 * `block("writes")` plays a Turso database past its plan's quota: every statement that writes
 * (insert, update, delete, replace, create, drop, alter) fails with the Hrana error code `BLOCKED`
 * and the message "Operation was blocked: <reason>" — libsql-server/src/error.rs `Error::Blocked`
 * (commit 01a8630ec6950d8bdd5c27173d4cc0f464a69e5b) as libsql-server/src/hrana/stmt.rs
 * `StmtError::code` reports it ("BLOCKED"). `block("all")` refuses reads too (a read quota), and
 * `block(null)` lifts it. A batch holding a refused statement is refused as a whole, before any of
 * it runs (the reference server fails the step; the client throws the same error either way).
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import {
  executeBatch,
  executeSequence,
  executeStmt,
  isAutocommit,
  ProtocolError,
  resolveSql,
  StmtError,
  type Connection,
} from "./hrana-exec.ts";
import { pipelineBody, type StreamRequest } from "./hrana-proto.ts";
import type { RowCount } from "./turso-rows.ts";

const MAX_SQL_COUNT = 50;
const MAX_STORED_SQL_BYTES = 5_000;

interface Stream {
  id: bigint;
  seq: bigint;
  /** null once the client closed the stream. */
  conn: Connection | null;
  lastUsed: number;
}

export interface HranaServerOptions {
  /** The database file; a fresh temporary file when unset. */
  path?: string;
  /** When set, every request must carry `Authorization: Bearer <authToken>`. */
  authToken?: string;
  /** An idle stream expires after this long (the reference server: 10 s). */
  streamIdleMs?: number;
}

export interface HranaServer {
  url: string;
  path: string;
  /** HTTP requests received, in order (`POST /v2/pipeline` …). */
  requests: string[];
  /** The SQL text of every statement, batch step and sequence received, in order. */
  statements: string[];
  /** Rows read and written as Turso bills them (test/support/turso-rows.ts), per SQL text; clear() to restart. */
  rows: Map<string, RowCount & { statements: number }>;
  /** Streams currently open (not closed, not expired). */
  openStreams(): number;
  /** Refuse writes (or everything) with `BLOCKED`, as Turso past its quota; null lifts it. */
  block(mode: "writes" | "all" | null, reason?: string): void;
  close(): Promise<void>;
}

export async function startHranaServer(options: HranaServerOptions = {}): Promise<HranaServer> {
  const path = options.path ?? join(mkdtempSync(join(tmpdir(), "fw-hrana-")), "db.sqlite");
  const idleMs = options.streamIdleMs ?? 10_000;
  const batonKey = randomBytes(32);
  const streams = new Map<bigint, Stream>();
  const expired = new Set<bigint>();
  const requests: string[] = [];
  const statements: string[] = [];
  const rows = new Map<string, RowCount & { statements: number }>();
  const onRows = (sql: string, count: RowCount) => {
    const sum = rows.get(sql) ?? { read: 0, written: 0, statements: 0 };
    rows.set(sql, { read: sum.read + count.read, written: sum.written + count.written, statements: sum.statements + 1 });
  };
  let blocked: { mode: "writes" | "all"; reason: string } | null = null;
  const WRITES = /\b(insert|update|delete|replace|create|drop|alter)\b/i;
  const refuseIfBlocked = (sqls: string[]) => {
    if (blocked && sqls.some((sql) => blocked!.mode === "all" || WRITES.test(sql)))
      throw new StmtError(`Operation was blocked: ${blocked.reason}`, "BLOCKED");
  };

  // WAL, so one stream's open write transaction does not block another stream's reads.
  const setup = new Database(path);
  setup.exec("PRAGMA journal_mode = WAL");
  setup.close();

  const mac = (payload: Buffer) => createHmac("sha256", batonKey).update(payload).digest();
  const encodeBaton = (s: Stream) => {
    const payload = Buffer.alloc(16);
    payload.writeBigUInt64BE(s.id, 0);
    payload.writeBigUInt64BE(s.seq, 8);
    return Buffer.concat([payload, mac(payload)])
      .toString("base64")
      .replace(/=+$/, "");
  };
  const decodeBaton = (baton: string) => {
    const data = Buffer.from(baton, "base64");
    if (data.length !== 48 || !timingSafeEqual(mac(data.subarray(0, 16)), data.subarray(16))) {
      throw new ProtocolError("Received an invalid baton");
    }
    return { id: data.readBigUInt64BE(0), seq: data.readBigUInt64BE(8) };
  };

  const closeConn = (s: Stream) => {
    s.conn?.db.close();
    s.conn = null;
  };
  /** Expires idle streams, closing their connections (an abandoned transaction rolls back). */
  const expireIdle = () => {
    const now = Date.now();
    for (const s of streams.values()) {
      if (now - s.lastUsed < idleMs) continue;
      closeConn(s);
      streams.delete(s.id);
      expired.add(s.id);
    }
  };

  const acquire = (baton: string | null, version: 2 | 3): Stream => {
    if (baton === null) {
      const stream: Stream = {
        id: randomBytes(8).readBigUInt64BE(0),
        seq: randomBytes(8).readBigUInt64BE(0),
        conn: { db: new Database(path), sqls: new Map(), version, onRows },
        lastUsed: Date.now(),
      };
      streams.set(stream.id, stream);
      return stream;
    }
    const { id, seq } = decodeBaton(baton);
    if (expired.has(id)) throw new StreamExpired();
    const stream = streams.get(id);
    if (!stream) throw new ProtocolError("Received an invalid baton");
    if (stream.seq !== seq) throw new ProtocolError("Received a baton that has already been used");
    if (stream.conn) stream.conn.version = version;
    return stream;
  };

  const handleRequest = (stream: Stream, request: StreamRequest, version: 2 | 3) => {
    if (request.type === "close") {
      closeConn(stream);
      return { type: "close" };
    }
    if (request.type === "store_sql" || request.type === "close_sql") {
      // Stored texts belong to the stream, and outlive nothing but it.
      const conn = stream.conn;
      if (!conn) throw new ProtocolError("Stream for this baton was closed");
      if (request.type === "close_sql") {
        conn.sqls.delete(request.sql_id);
        return { type: "close_sql" };
      }
      if (conn.sqls.has(request.sql_id)) throw new ProtocolError(`SQL text ${request.sql_id} already exists`);
      if (conn.sqls.size >= MAX_SQL_COUNT) {
        throw new StmtError(`The server already stores ${conn.sqls.size} SQL texts, it cannot store more`, "SQL_STORE_TOO_MANY");
      }
      if (Buffer.byteLength(request.sql) > MAX_STORED_SQL_BYTES) {
        throw new StmtError("The statement is too large to be stored", "SQL_STORE_TOO_LARGE");
      }
      conn.sqls.set(request.sql_id, request.sql);
      return { type: "store_sql" };
    }
    const conn = stream.conn;
    if (!conn) throw new ProtocolError("Stream for this baton was closed");
    switch (request.type) {
      case "execute":
        refuseIfBlocked([resolveSql(conn, request.stmt.sql, request.stmt.sql_id)]);
        return { type: "execute", result: executeStmt(conn, request.stmt) };
      case "batch":
        refuseIfBlocked(request.batch.steps.map((step) => resolveSql(conn, step.stmt.sql, step.stmt.sql_id)));
        return { type: "batch", result: executeBatch(conn, request.batch.steps) };
      case "sequence":
        refuseIfBlocked([resolveSql(conn, request.sql, request.sql_id)]);
        executeSequence(conn, resolveSql(conn, request.sql, request.sql_id));
        return { type: "sequence" };
      case "get_autocommit":
        if (version < 3) throw new ProtocolError("The `get_autocommit` request is only supported in protocol version 3 and higher");
        return { type: "get_autocommit", is_autocommit: isAutocommit(conn) };
    }
  };

  const pipeline = (raw: string, version: 2 | 3) => {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (err) {
      throw new ProtocolError(`Cannot deserialize client message from JSON: ${(err as Error).message}`);
    }
    const parsed = pipelineBody.safeParse(json);
    if (!parsed.success)
      throw new ProtocolError(
        `Cannot deserialize client message from JSON: ${parsed.error.issues[0]!.message} at ${parsed.error.issues[0]!.path.join(".")}`,
      );
    for (const request of parsed.data.requests) {
      if (request.type === "execute") statements.push(request.stmt.sql ?? `sql_id ${request.stmt.sql_id}`);
      if (request.type === "batch") for (const step of request.batch.steps) statements.push(step.stmt.sql ?? `sql_id ${step.stmt.sql_id}`);
      if (request.type === "sequence" || request.type === "store_sql") statements.push(request.sql ?? `sql_id ${request.sql_id}`);
    }
    const stream = acquire(parsed.data.baton ?? null, version);
    // Any protocol error below fails the request and, like the reference server, drops the stream.
    try {
      const results = parsed.data.requests.map((request) => {
        try {
          return { type: "ok", response: handleRequest(stream, request, version) };
        } catch (err) {
          if (err instanceof StmtError) return { type: "error", error: err.toHrana() };
          throw err;
        }
      });
      stream.seq = BigInt.asUintN(64, stream.seq + 1n);
      stream.lastUsed = Date.now();
      if (!stream.conn) streams.delete(stream.id);
      return { baton: stream.conn ? encodeBaton(stream) : null, base_url: null, results };
    } catch (err) {
      closeConn(stream);
      streams.delete(stream.id);
      throw err;
    }
  };

  const respond = (res: ServerResponse, status: number, body: unknown, type = "application/json") => {
    res.writeHead(status, { "Content-Type": type });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    requests.push(`${req.method} ${req.url}`);
    if (options.authToken !== undefined && req.headers.authorization !== `Bearer ${options.authToken}`) {
      return respond(res, 401, { message: "Unauthorized: a valid auth token is required", code: "UNAUTHORIZED" });
    }
    const version = req.url === "/v2/pipeline" || req.url === "/v2" ? 2 : req.url === "/v3/pipeline" || req.url === "/v3" ? 3 : null;
    if (version === null) return respond(res, 404, "Not found", "text/plain");
    if (!req.url!.endsWith("/pipeline")) {
      return req.method === "GET" ? respond(res, 200, "", "text/plain") : respond(res, 405, "Method not allowed", "text/plain");
    }
    if (req.method !== "POST") return respond(res, 405, "Method not allowed", "text/plain");
    expireIdle();
    try {
      respond(res, 200, pipeline(raw, version));
    } catch (err) {
      if (err instanceof StreamExpired) return respond(res, 400, { message: err.message, code: "STREAM_EXPIRED" });
      if (err instanceof ProtocolError) return respond(res, 400, err.message, "text/plain");
      respond(res, 500, { message: `internal error: ${String(err)}` });
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", () => ready()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    path,
    requests,
    statements,
    rows,
    openStreams: () => streams.size,
    block: (mode, reason = "the database is over its plan's quota") => {
      blocked = mode === null ? null : { mode, reason };
    },
    close: async () => {
      for (const s of streams.values()) closeConn(s);
      streams.clear();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

class StreamExpired extends Error {
  override message = "The stream has expired due to inactivity";
}
