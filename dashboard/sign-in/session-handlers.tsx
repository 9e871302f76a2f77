/**
 * Sign-in and sign-out pages and posts. A sign-in post is refused while its address is locked
 * out for failed attempts (429), then needs the form's single-use token (403; signed, so showing
 * the form writes nothing: auth/sign-in-tokens.ts), then a valid
 * ADMIN_TOKEN or operator token (401, counted toward the lockout; 429 while every address is
 * locked out, which never refuses the right token).
 */
import type { Context } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { recordActivity } from "../../auth/activity.ts";
import { authenticateToken } from "../../auth/authenticate-token.ts";
import { consumeSignInToken, issueSignInToken } from "../../auth/sign-in-tokens.ts";
import { clientAddress, currentLockout } from "../../auth/throttle.ts";
import { sendHtml } from "../shell/render.tsx";
import { endAllSessions, endSession, safeNext, startSession } from "./session.ts";
import { requestSession } from "../../auth/session-cookie.ts";
import { CSRF_FIELD } from "../../auth/session-write.ts";
import { SignInPage } from "./sign-in.tsx";

type Ctx = Context<AppEnv>;

async function renderSignIn(c: Ctx, next: string, error: string | null, status: 200 | 401 | 403 | 429 = 200) {
  const notice = c.req.query("signed-out") !== undefined ? "You are signed out." : null;
  const deps = c.get("deps");
  const token = await issueSignInToken(deps.config.adminToken, deps.clock.now());
  return sendHtml(
    c,
    <SignInPage token={token} next={next} error={error} notice={notice} configured={Boolean(deps.config.adminToken)} />,
    status,
  );
}

export async function signInPage(c: Ctx) {
  const next = safeNext(c.req.query("next"));
  if (await requestSession(c)) return c.redirect(next, 303);
  return renderSignIn(c, next, null);
}

export async function signIn(c: Ctx) {
  const deps = c.get("deps");
  const body = await c.req.parseBody();
  const next = safeNext(body.next);
  const address = clientAddress(c, deps.config.trustProxyHeader);
  const lockout = await currentLockout(deps, address);
  const tooMany = (retryAfterS: number) => {
    c.header("Retry-After", String(retryAfterS));
    return renderSignIn(c, next, `Too many failed sign-ins. Try again in ${retryAfterS} seconds.`, 429);
  };
  if (lockout?.scope === "address") return tooMany(lockout.retryAfterS);
  const formToken = typeof body[CSRF_FIELD] === "string" ? body[CSRF_FIELD] : "";
  if (!(await consumeSignInToken(deps.db, deps.config.adminToken, formToken, deps.clock.now()))) {
    return renderSignIn(c, next, "The sign-in form expired or did not come from this page. Please try again.", 403);
  }
  const given = typeof body.token === "string" ? body.token.trim() : "";
  const principal = await authenticateToken(deps, address, given, "dashboard sign-in");
  // The global lockout refuses only a token that failed: the right one signs in from a fresh address.
  if (!principal) return lockout ? tooMany(lockout.retryAfterS) : renderSignIn(c, next, "That token is not valid here.", 401);
  await startSession(c, principal, given);
  return c.redirect(next, 303);
}

export async function signOut(c: Ctx) {
  await endSession(c);
  return c.redirect("/sign-in?signed-out", 303);
}

export async function signOutEverywhere(c: Ctx) {
  const deps = c.get("deps");
  const who = c.get("operator");
  const revoked = await endAllSessions(c);
  await recordActivity(deps.db, who, { action: "sign_out_everywhere", subject: `${revoked} sessions`, at: deps.clock.now() });
  return c.redirect("/sign-in?signed-out", 303);
}
