/** The fleet's ports: the pipeline's plus the provider it acts through (chosen per agent in jobs/). */
import type { PipelineDeps } from "../pipeline/index.ts";
import type { FleetProvider } from "./providers/provider.ts";

export interface FleetDeps extends PipelineDeps {
  provider: FleetProvider;
}
