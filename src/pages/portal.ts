/**
 * The customer portal's pages (docs/customer-portal.md): `GET /portal/<session key>` exchanges the
 * key for a portal credential (HttpOnly cookie plus CSRF cookie) and serves the portal, a Preact
 * page built by Vite from web/portal/ into dist/portal (`npm run build`), which then talks only to
 * /graphql; `GET /portal/` serves the same page for a browser that already holds the cookie;
 * `/portal/assets/...` are the page's files. A key that opens nothing (unknown, expired, revoked)
 * gets the "this link has expired" page, with a link to the session's return URL when the key
 * names a session. Nothing here reads or shows customer data: that goes through GraphQL.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import { PORTAL_CSP } from "../infra/http-security.js";
import { credentialCookies } from "../domain/portal.js";
import { exchangeSessionKey } from "../services/portal.js";

/** Where `npm run build` writes the portal (dist/portal of the project, for src/ and dist/ alike). */
export const DEFAULT_PORTAL_DIR = path.join(fileURLToPath(new URL("../../", import.meta.url)), "dist", "portal");

export interface PortalPagesOptions {
  prisma: PrismaClient;
  /** the built portal (index.html and assets/); default DEFAULT_PORTAL_DIR */
  portalDir?: string;
  /** PUBLIC_URL: an https one makes the cookies Secure */
  publicUrl?: string;
  now?: () => Date;
}

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The stylesheet of the "link expired" page (served as a file: the CSP allows no inline style). */
const EXPIRED_CSS = `body{font-family:system-ui,sans-serif;background:#fff;color:#111;margin:0}
main{max-width:32rem;margin:15vh auto;padding:1.5rem}h1{font-size:1.5rem}a{color:#0b57d0}`;

/**
 * The page a key that opens nothing gets (404): in Spanish and English, with a link back to the
 * session's return URL when known (an http(s) URL, checked when the session was created).
 */
export function expiredPage(returnUrl: string | null): string {
  const back = returnUrl
    ? `<p><a href="${escapeHtml(returnUrl)}">Volver / Go back</a></p>`
    : "<p>Pida un nuevo enlace a la empresa. / Ask the business for a new link.</p>";
  return `<!doctype html>
<html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Enlace vencido / Link expired</title><link rel="stylesheet" href="/portal/expired.css"></head>
<body><main><h1>Este enlace ha vencido</h1><p lang="en"><strong>This link has expired.</strong></p>
<p>El enlace al portal de clientes ya no es válido. / The customer portal link is no longer valid.</p>${back}
</main></body></html>`;
}

function html(body: string, status: number, headers: Headers = new Headers()): Response {
  headers.set("content-type", "text/html; charset=utf-8");
  headers.set("cache-control", "no-store");
  headers.set("content-security-policy", PORTAL_CSP);
  return new Response(body, { status, headers });
}

/**
 * The handler of /portal paths: a Response for every path under /portal, null for any other path.
 * Only GET and HEAD (405 otherwise).
 */
export function createPortalPages(options: PortalPagesOptions): (request: Request) => Promise<Response | null> {
  const dir = options.portalDir ?? DEFAULT_PORTAL_DIR;
  const now = options.now ?? (() => new Date());
  let index: string | null = null;

  async function page(): Promise<string | null> {
    if (index !== null) return index;
    try {
      index = await fs.readFile(path.join(dir, "index.html"), "utf8");
    } catch {
      return null;
    }
    return index;
  }

  async function app(headers?: Headers): Promise<Response> {
    const body = await page();
    if (body === null)
      return Response.json(
        { error: { code: "service_unavailable", message: "The customer portal is not built: run npm run build" } },
        { status: 503 },
      );
    return html(body, 200, headers);
  }

  async function asset(name: string): Promise<Response> {
    const file = path.join(dir, "assets", name);
    const type = CONTENT_TYPES[path.extname(name)];
    if (!type || !/^[\w.-]+$/.test(name)) return html(expiredPage(null), 404);
    try {
      const content = await fs.readFile(file);
      return new Response(content, {
        headers: { "content-type": type, "cache-control": "public, max-age=31536000, immutable" },
      });
    } catch {
      return Response.json({ error: { code: "not_found", message: `No portal file ${name}` } }, { status: 404 });
    }
  }

  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname !== "/portal" && !url.pathname.startsWith("/portal/")) return null;
    if (request.method !== "GET" && request.method !== "HEAD")
      return Response.json(
        { error: { code: "method_not_allowed", message: `${request.method} is not allowed on the portal's pages` } },
        { status: 405, headers: { allow: "GET, HEAD" } },
      );
    const rest = url.pathname.replace(/^\/portal\/?/, "");
    if (rest === "") return app();
    if (rest === "expired.css")
      return new Response(EXPIRED_CSS, { headers: { "content-type": "text/css; charset=utf-8" } });
    if (rest.startsWith("assets/")) return asset(rest.slice("assets/".length));
    const key = rest.replace(/\/$/, "");
    const exchanged = await exchangeSessionKey(options.prisma, key, now());
    if (!exchanged.ok) return html(expiredPage(exchanged.returnUrl), 404);
    const secure = (options.publicUrl ?? url.origin).startsWith("https:");
    const headers = new Headers();
    for (const cookie of credentialCookies(exchanged.secret, exchanged.csrfToken, exchanged.expiresAt, now(), secure))
      headers.append("set-cookie", cookie);
    return app(headers);
  };
}
