/** Pipeline simulation, seeds 1, 3, 5, … (see pipeline-run.ts). */
import { pipelineSimulationShard } from "./pipeline-run.ts";

pipelineSimulationShard(1, 2);
