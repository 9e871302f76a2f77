/**
 * One "isolate" of bench/cpu.bench.ts: a child process that loads the Worker's own handlers
 * (functions/host/worker-host.ts `handleFetch` / `handleScheduled`, or the bare baseline app) and
 * runs the invocations its parent sends over IPC, one at a time, answering with the CPU each took.
 *
 * Only the Worker code runs here — the Hrana server, the QStash fake and the scripted LLM live in
 * the parent — so `process.cpuUsage()` around an invocation is that invocation's CPU: the handler,
 * its subrequests' client side (Node's fetch, which is JavaScript here and native in workerd), the
 * body read and every `ctx.waitUntil` promise, on all of this process's threads (V8's GC and
 * compiler threads included). The main thread's own part is read from Linux's schedstat (time on
 * a CPU; unlike wall or event-loop time, not inflated by the machine's load, but updated only at
 * scheduler ticks, so it is meaningful summed over many invocations, not one by one).
 * The request is built before the clock starts and the answer sent after it stops.
 *
 * Run as `tsx bench/cpu-isolate.ts worker|baseline '<env JSON>' [<profile path>]`; the first
 * invocation it gets is its cold one (see `warmHostRuntime`). With a profile path, V8's profiler
 * runs from the first invocation until the isolate is disconnected (start-up is not in it) and
 * writes a .cpuprofile there (Chrome DevTools reads it).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import type { ExecutionContext } from "hono";
import { bareBaselineApp } from "./cpu-baseline.ts";
import type { Invocation, Measured } from "./cpu-protocol.ts";

const [mode, envJson, profilePath] = process.argv.slice(2) as ["worker" | "baseline", string, string | undefined];
const env = JSON.parse(envJson) as Record<string, string>;

type Handlers = {
  fetch(request: Request, ctx: ExecutionContext): Promise<Response>;
  scheduled(ctx: ExecutionContext): void;
};

async function loadHandlers(): Promise<Handlers> {
  if (mode === "baseline") {
    const app = bareBaselineApp(env);
    return { fetch: async (request) => app.fetch(request), scheduled: () => {} };
  }
  const host = await import("../functions/host/worker-host.ts");
  return { fetch: (request, ctx) => host.handleFetch(request, env, ctx), scheduled: (ctx) => host.handleScheduled(env, ctx) };
}

/**
 * Node loads its own fetch (undici) and Web Crypto lazily, on first use; workerd has them
 * natively, built before any request. Using them once here, on nothing of the Worker's, keeps that
 * loading out of the cold invocation, which then measures the Worker code's first run.
 */
async function warmHostRuntime(): Promise<void> {
  const res = await fetch(`${env.DATABASE_URL}/v2`);
  await res.text();
  await new Response(new Request("http://warm.invalid/", { method: "POST", body: "{}" }).body).text();
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode("warm"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  await crypto.subtle.sign("HMAC", key, new TextEncoder().encode("warm"));
  await crypto.subtle.digest("SHA-256", new TextEncoder().encode("warm"));
}

/** CPU time of this process's main thread so far, in ms (Linux; NaN elsewhere). */
function mainThreadCpuMs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return NaN;
  }
}

async function invoke(handlers: Handlers, invocation: Invocation): Promise<Measured> {
  const request = invocation.request ? new Request(invocation.request.url, invocation.request) : null;
  const waited: Promise<unknown>[] = [];
  const ctx = {
    waitUntil: (p: Promise<unknown>) => void waited.push(p),
    passThroughOnException: () => {},
    props: {},
  } as unknown as ExecutionContext;
  const main = mainThreadCpuMs();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let status = 0;
  let body = "";
  if (request) {
    const res = await handlers.fetch(request, ctx);
    status = res.status;
    body = await res.text();
  } else handlers.scheduled(ctx);
  // A waitUntil promise may register another; all of them are the invocation's work.
  for (let seen = 0; seen < waited.length; seen = waited.length) await Promise.allSettled(waited.slice(seen));
  const used = process.cpuUsage(cpu);
  const wallMs = performance.now() - started;
  return { id: invocation.id, status, body, cpuMs: (used.user + used.system) / 1000, mainThreadMs: mainThreadCpuMs() - main, wallMs };
}

/** Profiles from the first invocation on; the returned function writes the profile. */
async function startProfile(path: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(path, JSON.stringify(profile));
  };
}

const handlers = await loadHandlers();
await warmHostRuntime();
let stopProfile: (() => Promise<void>) | null = null;
// Invocations are run strictly one after another, as the parent sends them.
let queue = Promise.resolve();
process.on("message", (invocation: Invocation) => {
  queue = queue.then(async () => {
    if (profilePath && !stopProfile) stopProfile = await startProfile(profilePath);
    process.send!(await invoke(handlers, invocation));
  });
});
process.once("disconnect", () => void queue.then(async () => (await stopProfile?.(), process.exit(0))));
process.send!({ ready: true });
