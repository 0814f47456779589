/**
 * GraphiQL (docs/graphql.md "GraphiQL"): the page `GET /graphql` answers a browser (Accept:
 * text/html), and its files under `/graphiql/`, all served by the service itself: nothing from a
 * CDN, so the page works offline.
 *
 * The files are GraphiQL's own build as `@graphql-yoga/render-graphiql` ships it (its `graphiql`
 * module exports Yoga's GraphiQL script, its stylesheet, Monaco's three editor workers and the
 * favicon, as strings), each served as a file of its own instead of inlined in one 9 MB page:
 * named by the hash of its content and cached a year (`immutable`), compressed once (brotli or
 * gzip, infra/static-files.ts). The page itself is about 1 KB, revalidated by its ETag. A start
 * script of ours (START_SCRIPT) points Monaco at the workers' files and renders GraphiQL with the
 * options the page carries as JSON, so the page has no inline script and its CSP
 * (infra/http-security.ts `GRAPHIQL_CSP`) allows scripts and workers from the service only.
 *
 * The module of 9 MB is imported at the first request for the page or a file (about a second and
 * 50 MB), not at start: API calls and most tests never need it.
 */
import type { GraphiQLOptions } from "graphql-yoga";
import { GRAPHIQL_CSP } from "../infra/http-security.js";
import { IMMUTABLE, REVALIDATE, serveFile, staticFile, type StaticFile } from "../infra/static-files.js";

/** Where GraphiQL's files are served: `/graphiql/<name>-<hash>.<ext>`. */
export const GRAPHIQL_FILES = "/graphiql/";

/**
 * True for a request that gets the GraphiQL page: a GET of /graphql (or /graphql/) that accepts
 * text/html, Yoga's own test (`shouldRenderGraphiQL`). Any other GET of /graphql is a GraphQL
 * request.
 */
export function isGraphiQLRequest(request: Request, pathname: string): boolean {
  return (
    request.method === "GET" &&
    (pathname === "/graphql" || pathname === "/graphql/") &&
    (request.headers.get("accept") ?? "").includes("text/html")
  );
}

/**
 * The start script: Monaco's workers from the service's files (the URLs the page's JSON lists, by
 * the label Monaco asks for), then GraphiQL rendered into #root once the document is parsed (this
 * script and GraphiQL's are both `defer`, in that order: MonacoEnvironment is set before GraphiQL's
 * script runs, and DOMContentLoaded comes after both ran).
 */
const START_SCRIPT = `"use strict";
(function () {
  var config = JSON.parse(document.getElementById("graphiql-config").textContent);
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (_moduleId, label) {
      return config.workers[label];
    },
  };
  document.addEventListener("DOMContentLoaded", function () {
    YogaGraphiQL.renderYogaGraphiQL(document.getElementById("root"), config.options);
  });
})();
`;

const JS = "text/javascript; charset=utf-8";

interface GraphiQLFiles {
  /** every file by its served name (`<name>-<hash>.<ext>`) */
  byName: Map<string, StaticFile>;
  /** the served path of each */
  script: string;
  stylesheet: string;
  start: string;
  favicon: string;
  /** Monaco's workers, by the label Monaco asks `getWorkerUrl` for */
  workers: { editorWorkerService: string; json: string; graphql: string };
}

let files: Promise<GraphiQLFiles> | undefined;

/** GraphiQL's files, read from `@graphql-yoga/render-graphiql` at the first call and kept. */
function graphiqlFiles(): Promise<GraphiQLFiles> {
  if (files) return files;
  files = import("@graphql-yoga/render-graphiql/graphiql").then((g) => {
    const byName = new Map<string, StaticFile>();
    const add = (name: string, ext: string, file: StaticFile) => {
      const served = `${name}-${file.hash}.${ext}`;
      byName.set(served, file);
      return `${GRAPHIQL_FILES}${served}`;
    };
    // the favicon is a data: URL (an .ico in base64): served as the file it holds
    const icon = /^data:([^;,]+);base64,(.*)$/s.exec(g.favicon);
    if (!icon) throw new Error("@graphql-yoga/render-graphiql's favicon is not a base64 data: URL");
    return {
      byName,
      script: add("graphiql", "js", staticFile(g.js, JS)),
      stylesheet: add("graphiql", "css", staticFile(g.css, "text/css; charset=utf-8")),
      start: add("start", "js", staticFile(START_SCRIPT, JS)),
      favicon: add("favicon", "ico", staticFile(Buffer.from(icon[2], "base64"), icon[1])),
      workers: {
        editorWorkerService: add("editor.worker", "js", staticFile(g.editorWorkerService, JS)),
        json: add("json.worker", "js", staticFile(g.jsonWorker, JS)),
        graphql: add("graphql.worker", "js", staticFile(g.graphqlWorker, JS)),
      },
    };
  });
  // a failure is not kept: the next request tries again
  files.catch(() => (files = undefined));
  return files;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** JSON inside a <script type="application/json">: `<` escaped, so no `</script>` can end it. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

/** The page: GraphiQL's files by their hashed names, the options and the workers' URLs as JSON. */
export function graphiqlPage(f: GraphiQLFiles, options: GraphiQLOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title ?? "GraphiQL")}</title>
<link rel="icon" href="${f.favicon}">
<link rel="stylesheet" href="${f.stylesheet}">
<script type="application/json" id="graphiql-config">${scriptJson({ options, workers: f.workers })}</script>
<script defer src="${f.start}"></script>
<script defer src="${f.script}"></script>
</head>
<body id="body" class="no-focus-outline">
<noscript>GraphiQL needs JavaScript.</noscript>
<div id="root"></div>
</body>
</html>
`;
}

/**
 * The GraphiQL handler for `options`: `page(request)` answers the page (GET only; see
 * isGraphiQLRequest), `file(request, name)` a file under GRAPHIQL_FILES (404 for a name it does
 * not serve).
 */
export function createGraphiQL(options: GraphiQLOptions) {
  let page: Promise<StaticFile> | undefined;
  return {
    async page(request: Request): Promise<Response> {
      if (!page) {
        page = graphiqlFiles().then((f) => staticFile(graphiqlPage(f, options), "text/html; charset=utf-8"));
        page.catch(() => (page = undefined));
      }
      // the same URL answers GraphQL to other Accept headers
      return serveFile(request, await page, {
        cacheControl: REVALIDATE,
        headers: { "content-security-policy": GRAPHIQL_CSP, vary: "Accept" },
      });
    },
    async file(request: Request, name: string): Promise<Response> {
      if (request.method !== "GET")
        return Response.json(
          { error: { code: "method_not_allowed", message: `${request.method} is not allowed on GraphiQL's files` } },
          { status: 405, headers: { allow: "GET, HEAD" } },
        );
      const found = (await graphiqlFiles()).byName.get(name);
      if (!found)
        return Response.json(
          { error: { code: "not_found", message: `No GraphiQL file ${name}` } },
          { status: 404, headers: { "cache-control": "no-store" } },
        );
      return serveFile(request, found, { cacheControl: IMMUTABLE });
    },
  };
}
