/**
 * Starts and drives the isolates of bench/cpu.bench.ts (bench/cpu-isolate.ts child processes):
 * one invocation at a time over IPC. `close()` ends only the child it started (it exits when
 * disconnected; killed if it has not 10 s later).
 */
import { fork, type ChildProcess } from "node:child_process";
import type { Invocation, Measured } from "./cpu-protocol.ts";

export interface Isolate {
  invoke(request?: Invocation["request"]): Promise<Measured>;
  close(): Promise<void>;
}

export interface IsolateOptions {
  /** Record a CPU profile of the isolate's invocations into this file. */
  profilePath?: string;
}

export async function startIsolate(
  mode: "worker" | "baseline",
  env: Record<string, string>,
  options: IsolateOptions = {},
): Promise<Isolate> {
  const args = [mode, JSON.stringify(env), ...(options.profilePath ? [options.profilePath] : [])];
  const child: ChildProcess = fork(new URL("./cpu-isolate.ts", import.meta.url).pathname, args, {
    execArgv: ["--import", "tsx"],
    // The Worker's log lines go nowhere: writing them still costs the isolate what console.log costs.
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const waiting = new Map<number, (m: Measured) => void>();
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  child.on("message", (message: Measured | { ready: true }) => {
    if ("ready" in message) return ready();
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  await Promise.race([started, exited.then(() => Promise.reject(new Error(`the ${mode} isolate exited before it was ready`)))]);
  let next = 0;
  return {
    invoke(request) {
      const id = ++next;
      return new Promise<Measured>((resolve, reject) => {
        waiting.set(id, resolve);
        child.send({ id, request } satisfies Invocation, (err) => err && reject(err));
      });
    },
    async close() {
      // Disconnected, the isolate finishes what it was sent (and writes its profile), then exits.
      if (child.connected) child.disconnect();
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
