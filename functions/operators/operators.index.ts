/** Wiring of /api/operators (admin only): GET list, POST create, PATCH /:id (Slack user, role), DELETE /:id revoke. */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { requireRole } from "../../auth/require-role.ts";
import { validate } from "../../jobs/validate.ts";
import * as h from "./operators.handlers.ts";
import { newOperatorBody, operatorChangeBody, operatorParam } from "../../auth/operator-requests.ts";

export const operatorRoutes = new Hono<AppEnv>()
  .use("/operators", requireRole("admin"))
  .use("/operators/*", requireRole("admin"))
  .get("/operators", (c) => h.getOperators(c))
  .post("/operators", validate("json", newOperatorBody), (c) =>
    h.postOperator(c, c.req.valid("json").name, c.req.valid("json").role, c.req.valid("json").slackUserId),
  )
  .patch("/operators/:id", validate("param", operatorParam), validate("json", operatorChangeBody), (c) =>
    h.patchOperator(c, c.req.valid("param").id, c.req.valid("json")),
  )
  .delete("/operators/:id", validate("param", operatorParam), (c) => h.deleteOperator(c, c.req.valid("param").id));
