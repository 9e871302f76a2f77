/**
 * What the signed-in role may do in the dashboard: the one table pages read to decide which
 * controls to render, and the routes read to decide which role a post needs. A viewer gets no
 * control that writes; an operator no admin form. The check itself is auth/roles.ts `hasRole`.
 */
import { hasRole, type Principal, type Role } from "../../auth/roles.ts";

export const NEEDS = {
  chat: "operator",
  trigger: "operator",
  reset: "operator",
  mode: "operator",
  deleteMemory: "operator",
  replay: "operator",
  decide: "operator",
  instanceAction: "operator",
  simulateFailure: "operator",
  liftBlock: "operator",
  liftBreaker: "operator",
  readLogs: "operator",
  changeAgents: "admin",
  manageOperators: "admin",
} as const satisfies Record<string, Role>;

export type Ability = keyof typeof NEEDS;

/** The signed-in operator as the pages see it: who, and what they may do. */
export interface Viewer {
  name: string;
  role: Role;
  can(ability: Ability): boolean;
}

export function viewerOf(who: Principal | undefined): Viewer {
  const principal = who ?? { operatorId: -1, name: "", role: "viewer" as const };
  return { name: principal.name, role: principal.role, can: (ability) => hasRole(principal, NEEDS[ability]) };
}

/** A viewer that may do nothing: for rendering where no one is signed in. */
export const READ_ONLY: Viewer = viewerOf(undefined);
