/**
 * The REST reference page (docs/rest.md "OpenAPI, the reference page and the contract test"):
 * `GET /docs` is Redoc rendering `/v1/openapi.json`, and `GET /docs/redoc.standalone.js` Redoc's
 * standalone bundle served from node_modules (the `redoc` dependency): no CDN, no inline script,
 * so the page works offline under its CSP (infra/http-security.ts `DOCS_CSP`). No API key.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import { DOCS_CSP } from "../infra/http-security.js";

const BUNDLE_PATH = "/docs/redoc.standalone.js";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Billing service REST API</title>
</head>
<body>
<redoc spec-url="/v1/openapi.json" hide-download-button="false"></redoc>
<script src="${BUNDLE_PATH}"></script>
</body>
</html>
`;

let bundle: Buffer | undefined;

/** The one address on a CDN the bundle loads by itself (the side menu's "API docs by Redocly" logo). */
const CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";

/**
 * Redoc's standalone bundle, read once from the installed package, with its CDN logo replaced by
 * an empty `data:` image: the page loads nothing from another host (the logo is left out).
 */
function redocBundle(): Buffer {
  bundle ??= Buffer.from(
    fs
      .readFileSync(createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js"), "utf8")
      .replaceAll(CDN_LOGO, "data:image/gif;base64,R0lGODlhAQABAAAAACw="),
  );
  return bundle;
}

/** Whether `pathname` is one of the reference page's paths. */
export function isDocsPath(pathname: string): boolean {
  return pathname === "/docs" || pathname === "/docs/" || pathname === BUNDLE_PATH;
}

/** Answers `/docs` (the page) and its bundle; GET and HEAD only. */
export function handleDocs(request: Request): Response {
  const url = new URL(request.url);
  if (request.method !== "GET" && request.method !== "HEAD")
    return Response.json({ error: { code: "method_not_allowed", message: "Use GET" } }, { status: 405 });
  if (url.pathname === BUNDLE_PATH)
    return new Response(new Uint8Array(redocBundle()), {
      headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" },
    });
  return new Response(PAGE, {
    headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": DOCS_CSP },
  });
}
