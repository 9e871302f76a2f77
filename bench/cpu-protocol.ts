/** The messages between bench/cpu.bench.ts and its isolates (bench/cpu-isolate.ts), over IPC. */

/** One invocation: a fetch with this request, or (no request) the scheduled handler. */
export interface Invocation {
  id: number;
  request?: { url: string; method: string; headers: Record<string, string>; body?: string };
}

/** What one invocation cost, measured inside the isolate. */
export interface Measured {
  id: number;
  status: number;
  body: string;
  /** process.cpuUsage() user + system over the invocation, every thread of the process. */
  cpuMs: number;
  /** The main thread's own CPU time over the invocation (Linux schedstat). */
  mainThreadMs: number;
  wallMs: number;
}
