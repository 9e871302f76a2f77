/**
 * Which seeds a simulation file runs. SIM_SEEDS (default 1000) is the total for the pipeline
 * simulation, split between its shard files so both cores work; SIM_SEED replays a single seed.
 */
export function pipelineSeeds(shard: number, shards: number): number[] {
  if (process.env.SIM_SEED) return shard === 0 ? [Number(process.env.SIM_SEED)] : [];
  const total = Number(process.env.SIM_SEEDS ?? 1000);
  return Array.from({ length: total }, (_, i) => i + 1).filter((seed) => seed % shards === shard);
}
