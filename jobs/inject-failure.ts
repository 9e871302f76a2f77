/**
 * A simulated failure asked for over HTTP (the API and the dashboard's form): 409 when the fleet
 * is not the simulator, 404 for an instance the simulator does not have.
 */
import type { FleetDeps } from "../fleet/deps.ts";
import type { FailureKind } from "../fleet/providers/simulated-failures.ts";
import { injectSimulatorFailure, NotSimulatedError } from "../fleet/providers/simulator-reports.ts";
import { RequestError } from "./errors.ts";

export async function injectFailureOrRefuse(deps: FleetDeps, instanceId: string, kind: FailureKind) {
  let injected;
  try {
    injected = await injectSimulatorFailure(deps, instanceId, kind);
  } catch (err) {
    if (err instanceof NotSimulatedError) throw new RequestError(409, err.message);
    throw err;
  }
  if (!injected) throw new RequestError(404, `unknown simulated instance: ${instanceId}`);
  return injected;
}
