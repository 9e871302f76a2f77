/**
 * A refused dashboard request as a page in the dashboard's style, never raw JSON: a role too low
 * (403, naming the role needed and the signed-in one) and a form post with a missing or stale CSRF
 * token (403). Nothing was done either way; a refused chat message is kept in the chat form so
 * the typed text is not lost. Role checks decide with dashboard/shell/can.ts's table.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../jobs/app-env.ts";
import type { Role } from "../../auth/roles.ts";
import { hasRole } from "../../auth/roles.ts";
import { Document } from "./layout.tsx";
import { chatPage } from "../page-handlers.tsx";
import { sendHtml, sendPage } from "./render.tsx";
import { csrfRefusal } from "../sign-in/session.ts";

type Ctx = Context<AppEnv>;

const ROLE_WORDS: Record<Role, string> = { viewer: "a viewer", operator: "an operator", admin: "an admin" };

/** Renders `message` as a 403 page; on the chat post, the chat page with the typed text kept. */
export async function refusedPage(c: Ctx, message: string) {
  if (c.req.method === "POST" && c.req.path === "/chat" && c.var.agent) {
    const text = (await c.req.parseBody()).text;
    return chatPage(c, message, { status: 403, text: typeof text === "string" ? text : "" });
  }
  const body = (
    <>
      <p class="error" role="alert">
        {message}
      </p>
      <p>
        <a href="/">Back to the overview</a>
      </p>
    </>
  );
  if (!c.var.agent) {
    return sendHtml(
      c,
      <Document title="Not allowed">
        <body>
          <main id="main">
            <h1>Not allowed</h1>
            {body}
          </main>
        </body>
      </Document>,
      403,
    );
  }
  return sendPage(c, { title: "Not allowed", current: null, status: 403 }, body);
}

export function roleRefusal(needed: Role, who: { name: string; role: Role }): string {
  return `This needs the ${needed} role; you are signed in as ${who.name}, ${ROLE_WORDS[who.role]}. Nothing was done.`;
}

/** The dashboard's role guard (after the session and the agent are known): 403 as a page. */
export function requirePageRole(role: Role) {
  return createMiddleware<AppEnv>(async function requirePageRoleMiddleware(c, next) {
    const who = c.get("operator");
    if (!hasRole(who, role)) return refusedPage(c, roleRefusal(role, who));
    return next();
  });
}

/** The CSRF check of every signed-in form post (dashboard/sign-in/session.ts), refusing with a page. */
export const verifyCsrfPage = createMiddleware<AppEnv>(async function verifyCsrfPageMiddleware(c, next) {
  const refusal = await csrfRefusal(c);
  if (refusal) return refusedPage(c, `This form was refused: ${refusal}. Nothing was done.`);
  return next();
});
