/**
 * Wiring of the API's description (jobs/openapi/): GET /openapi.json answers the OpenAPI 3.1
 * document of every /api route, GET /openapi the same as a readable page. Public, like /healthz:
 * the document describes routes, not data, and every route it lists still needs its token. Built
 * once per app from the app's own route list (`routesOf`, given by functions/app.ts).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../jobs/app-env.ts";
import { buildOpenApiDocument, type OpenApiDocument, type RouteEntry } from "../../jobs/openapi/openapi-document.ts";
import { renderApiReferencePage } from "../../jobs/openapi/api-reference.ts";

export function openApiRoutes(routesOf: () => readonly RouteEntry[]) {
  let document: OpenApiDocument | undefined;
  const built = () => (document ??= buildOpenApiDocument(routesOf()));
  return new Hono<AppEnv>().get("/openapi.json", (c) => c.json(built())).get("/openapi", (c) => c.html(renderApiReferencePage(built())));
}
