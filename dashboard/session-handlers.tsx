/** Sign-in and sign-out pages and posts. */
import type { Context } from "hono";
import type { AppEnv } from "../functions/app-env.ts";
import { isAdminToken } from "../functions/middleware/admin-auth.ts";
import { sendHtml } from "./render.tsx";
import { CSRF_FIELD, endSession, issueSignInToken, safeNext, signedInSession, signInTokenMatches, startSession } from "./session.ts";
import { SignInPage } from "./sign-in.tsx";

type Ctx = Context<AppEnv>;

function renderSignIn(c: Ctx, next: string, error: string | null, status: 200 | 401 | 403 = 200) {
  const notice = c.req.query("signed-out") !== undefined ? "You are signed out." : null;
  const configured = Boolean(c.get("deps").config.adminToken);
  return sendHtml(c, <SignInPage token={issueSignInToken(c)} next={next} error={error} notice={notice} configured={configured} />, status);
}

export async function signInPage(c: Ctx) {
  const next = safeNext(c.req.query("next"));
  if (await signedInSession(c)) return c.redirect(next, 303);
  return renderSignIn(c, next, null);
}

export async function signIn(c: Ctx) {
  const body = await c.req.parseBody();
  const next = safeNext(body.next);
  const formToken = typeof body[CSRF_FIELD] === "string" ? body[CSRF_FIELD] : "";
  if (!(await signInTokenMatches(c, formToken))) {
    return renderSignIn(c, next, "The sign-in form expired or did not come from this page. Please try again.", 403);
  }
  const given = typeof body.token === "string" ? body.token.trim() : "";
  if (!(await isAdminToken(given, c.get("deps").config.adminToken))) {
    c.get("deps").log.info("dashboard sign-in refused", { requestId: c.get("requestId") });
    return renderSignIn(c, next, "That is not the admin token.", 401);
  }
  await startSession(c);
  return c.redirect(next, 303);
}

export function signOut(c: Ctx) {
  endSession(c);
  return c.redirect("/sign-in?signed-out", 303);
}
