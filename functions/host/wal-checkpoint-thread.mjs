/**
 * The WAL checkpoint thread of the Node host (functions/host/wal-checkpointer.ts): its own
 * connection to the database file runs a PASSIVE checkpoint every `intervalMs`, which copies the
 * log's committed pages into the file without waiting for or blocking the host's writer. Plain
 * JavaScript because worker threads do not inherit tsx's loader.
 * Out: { log, checkpointed } (SQLite's frame counts) whenever a checkpoint copied something new;
 * "closed" after a "stop" message, when its connection is closed.
 */
import { parentPort, workerData } from "node:worker_threads";
import Database from "libsql";

const { path, intervalMs, busyTimeoutMs } = workerData;
const db = new Database(path, { timeout: busyTimeoutMs });
db.exec("PRAGMA synchronous = NORMAL");
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
let last = "";

const timer = setInterval(() => {
  const { log, checkpointed } = checkpoint.get();
  const now = `${log}/${checkpointed}`;
  if (checkpointed > 0 && now !== last) parentPort.postMessage({ log, checkpointed });
  last = now;
}, intervalMs);

parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  db.close();
  parentPort.postMessage("closed");
  parentPort.close();
});
