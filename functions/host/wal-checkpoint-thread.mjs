/**
 * The WAL checkpoint thread of the Node host (functions/host/wal-checkpointer.ts): its own
 * connection to the database file runs a PASSIVE checkpoint every `intervalMs`, which copies the
 * log's committed pages into the file without waiting for or blocking the host's writer. Plain
 * JavaScript because worker threads do not inherit tsx's loader.
 * Out: "ready" once its connection is open (it reads nothing more until its first checkpoint);
 * "checkpointed" whenever a checkpoint copied pages; "closed" after a "stop" message, when its
 * connection is closed.
 */
import { statSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import Database from "libsql";

const { path, opened, intervalMs, busyTimeoutMs } = workerData;
// Only the file the host opened: opening a path whose file was deleted (or replaced) since would
// create a new, empty database there, and the host would see "replaced" where the truth is "deleted".
const now = statSync(path, { throwIfNoEntry: false });
if (!now || (opened && (now.dev !== opened.dev || now.ino !== opened.ino))) {
  throw new Error(`the database file ${path} is no longer the one the host opened; not checkpointing it`);
}
const db = new Database(path, { timeout: busyTimeoutMs });
db.exec("PRAGMA synchronous = NORMAL");
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
let copied = 0;
parentPort.postMessage("ready");

const timer = setInterval(() => {
  // SQLite's frame counts: in the log, and copied from it since it was last rewound.
  const { checkpointed } = checkpoint.get();
  if (checkpointed !== copied && checkpointed > 0) parentPort.postMessage("checkpointed");
  copied = checkpointed;
}, intervalMs);

parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  db.close();
  parentPort.postMessage("closed");
  parentPort.close();
});
