/**
 * Roles and the principal a request acts as. `viewer` reads; `operator` also chats, triggers,
 * approves or rejects, resets, deletes memory facts, replays runs and runs the cron tick; `admin` also manages operators. The
 * bootstrap admin is whoever holds ADMIN_TOKEN (operator id 0, no operators row).
 */
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

export interface Principal {
  /** 0 for the bootstrap admin (ADMIN_TOKEN). */
  operatorId: number;
  name: string;
  role: Role;
}

export const BOOTSTRAP_ADMIN: Principal = { operatorId: 0, name: "admin", role: "admin" };

export function hasRole(principal: Principal, needed: Role): boolean {
  return ROLES.indexOf(principal.role) >= ROLES.indexOf(needed);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
