/**
 * The REST reference page (docs/rest.md "OpenAPI, the reference page and the contract test"):
 * `GET /docs` is Redoc rendering `/v1/openapi.json`, and `GET /docs/redoc.standalone-<hash>.js`
 * Redoc's standalone bundle served from node_modules (the `redoc` dependency): no CDN, no inline
 * script, so the page works offline under its CSP (infra/http-security.ts `DOCS_CSP`). No API key.
 * The bundle is named by its hash and cached a year, compressed once; the page is revalidated by
 * its ETag (infra/static-files.ts).
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import { DOCS_CSP } from "../infra/http-security.js";
import { IMMUTABLE, REVALIDATE, serveFile, staticFile, type StaticFile } from "../infra/static-files.js";

/** The page's title (the browser tab's); Redoc's heading is the OpenAPI document's `info.title`. */
export const DOCS_TITLE = "Billing API reference";

/** The one address on a CDN the bundle loads by itself (the side menu's "API docs by Redocly" logo). */
const CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";

interface DocsFiles {
  page: StaticFile;
  bundle: StaticFile;
  bundlePath: string;
}

let files: DocsFiles | undefined;

/**
 * Redoc's standalone bundle, read once from the installed package, with its CDN logo replaced by
 * an empty `data:` image (the page loads nothing from another host; the logo is left out), and the
 * page that loads it.
 */
function docsFiles(): DocsFiles {
  if (files) return files;
  const bundle = staticFile(
    fs
      .readFileSync(createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js"), "utf8")
      .replaceAll(CDN_LOGO, "data:image/gif;base64,R0lGODlhAQABAAAAACw="),
    "text/javascript; charset=utf-8",
  );
  const bundlePath = `/docs/redoc.standalone-${bundle.hash}.js`;
  const page = staticFile(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${DOCS_TITLE}</title>
</head>
<body>
<redoc spec-url="/v1/openapi.json" hide-download-button="false"></redoc>
<script src="${bundlePath}"></script>
</body>
</html>
`,
    "text/html; charset=utf-8",
  );
  return (files = { page, bundle, bundlePath });
}

/** Whether `pathname` is one of the reference page's paths. */
export function isDocsPath(pathname: string): boolean {
  return pathname === "/docs" || pathname === "/docs/" || pathname.startsWith("/docs/redoc.standalone");
}

/** Answers `/docs` (the page) and its bundle; GET only (http-server.ts answers HEAD as GET). */
export async function handleDocs(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (request.method !== "GET")
    return Response.json(
      { error: { code: "method_not_allowed", message: "Use GET" } },
      { status: 405, headers: { allow: "GET, HEAD" } },
    );
  const { page, bundle, bundlePath } = docsFiles();
  if (url.pathname === bundlePath) return serveFile(request, bundle, { cacheControl: IMMUTABLE });
  if (url.pathname !== "/docs" && url.pathname !== "/docs/")
    return Response.json(
      { error: { code: "not_found", message: `No route for ${url.pathname}` } },
      { status: 404, headers: { "cache-control": "no-store" } },
    );
  return serveFile(request, page, { cacheControl: REVALIDATE, headers: { "content-security-policy": DOCS_CSP } });
}
