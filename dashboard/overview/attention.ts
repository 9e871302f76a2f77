/**
 * The attention read model (jobs/read-models/attention.ts) as the Agents page's handlers import it
 * today; kept only until that import points at jobs/read-models/ directly.
 */
export { loadAttention } from "../../jobs/read-models/attention.ts";
