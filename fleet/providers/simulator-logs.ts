/**
 * What a simulated instance's container log looks like: a training job's start-up and progress
 * lines, ending the way its state says (the traceback of an exit, the CUDA out-of-memory error,
 * an image pull that stalls, a stop signal). Deterministic for an instance and its state, so the
 * agent (and tests) read the same log twice, and short enough that tail and cap are exercised.
 */
import type { FleetInstance } from "./provider.ts";
import type { FailureKind } from "./simulated-failures.ts";

const ENDINGS: Record<FailureKind, string[]> = {
  exit: [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 212, in <module>',
    "    main(config)",
    '  File "/workspace/train.py", line 187, in main',
    "    batch = next(loader)",
    "FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-0042.parquet'",
    "container exited with code 1",
  ],
  oom: [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 163, in train_step',
    "    loss = model(**batch).loss",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.",
    "container exited with code 137",
  ],
  stuck_loading: ["pulling image pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "Waiting: layer 7 of 12 (no progress)"],
  host_offline: ["[vast] connection to host lost; no further log lines received"],
  idle: ["dataloader: queue empty, waiting for the next shard (GPU idle)"],
  busy: [],
  outbid: ["[vast] interruptible instance stopped: outbid by a higher bid"],
  gpu_gone: ["RuntimeError: No CUDA GPUs are available", "container exited with code 1"],
};

export function simulatedLog(instance: FleetInstance, failure: FailureKind | null, now: number): string {
  const started = new Date(instance.startedAt ?? now).toISOString();
  const steps = Math.max(1, Math.min(40, Math.floor(((now - (instance.startedAt ?? now)) / 60_000) | 0) + 3));
  const lines = [
    `${started} [vast] starting container for ${instance.label ?? instance.id} on ${instance.gpuCount ?? 1}x ${instance.gpuName ?? "GPU"}`,
    "==========",
    "== CUDA ==",
    "==========",
    "CUDA Version 12.4.1",
    "loading checkpoint /workspace/ckpt/latest.pt",
  ];
  if (failure !== "stuck_loading") {
    for (let step = 1; step <= steps; step++) lines.push(`step ${step * 50} | loss ${(2.4 / Math.sqrt(step)).toFixed(4)} | lr 3.0e-04`);
  }
  if (failure) lines.push(...ENDINGS[failure]);
  else if (instance.state === "stopped") lines.push("received SIGTERM, saving checkpoint and shutting down");
  return lines.join("\n");
}

/** The last `count` lines of a log. */
export function lastLines(text: string, count: number): string {
  const lines = text.split("\n");
  return lines.slice(Math.max(0, lines.length - count)).join("\n");
}
