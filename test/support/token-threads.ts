/**
 * Stand-ins for the token-count worker thread that misbehave the ways a real thread can: one
 * that crashes (throws) on its first request, and one that never answers (a stuck thread), so
 * tests can show the Node host's TokenWorker falls back and stays bounded. Real worker threads,
 * written as data: URLs so no extra file has to be loaded by a loader.
 */
export const crashingThread = new URL(
  `data:text/javascript,${encodeURIComponent('import { parentPort } from "node:worker_threads"; parentPort.on("message", () => { throw new Error("tokenizer blew up"); });')}`,
);

export const stuckThread = new URL(
  `data:text/javascript,${encodeURIComponent('import { parentPort } from "node:worker_threads"; parentPort.on("message", () => {});')}`,
);
