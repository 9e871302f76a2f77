/** Pipeline simulation, seeds 2, 4, 6, … (see pipeline-run.ts). */
import { pipelineSimulationShard } from "./pipeline-run.ts";

pipelineSimulationShard(0, 2);
