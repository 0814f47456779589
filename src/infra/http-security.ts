/**
 * Security headers and CORS, written once for every response of the service (docs/limits.md
 * "Security headers" and "CORS"). The set follows helmet's defaults (nosniff, frame-ancestors
 * 'none' and X-Frame-Options DENY, Referrer-Policy no-referrer, HSTS, COOP/CORP, no DNS prefetch,
 * no cross-domain policies) with a Content-Security-Policy per kind of answer:
 *
 * - API answers (JSON, files, metrics): `default-src 'none'`: nothing in them may load or run;
 * - the hosted checkout page (pages/checkout.ts): its inline style only, images from the service;
 *   its forms post to the page itself, which then redirects to the merchant's `return_url`, so
 *   `form-action` is left open (Chromium applies it to the redirect too);
 * - the customer portal (pages/portal.ts): scripts, styles and requests from the service only,
 *   nothing inline (PORTAL_CSP); the dashboard (pages/dashboard.ts) likewise, and its PDFs shown
 *   in a frame from `blob:` (DASHBOARD_CSP);
 * - GraphiQL (pages/graphiql.ts): its scripts and Monaco's editor workers are files of the
 *   service (no inline script), its styles inline and its fonts and icons from `data:`; requests
 *   go to the service itself only (`connect-src 'self'`);
 * - the REST reference at /docs (pages/docs.ts): Redoc's bundle from the service itself (no
 *   inline script), its injected styles inline, its search worker from `blob:`, the document
 *   from `connect-src 'self'`.
 *
 * Every kind keeps `frame-ancestors 'none'` (no page of the service can be framed: the checkout's
 * Approve button cannot be clickjacked), `base-uri 'none'` and `object-src 'none'`.
 * No module dependencies, so http-server.ts can use it for the answers it writes itself.
 */
const COMMON = "frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/** CSP of API answers. */
export const API_CSP = `default-src 'none'; ${COMMON}; form-action 'none'`;

/**
 * CSP of the customer portal's pages (pages/portal.ts): its script and stylesheet files from the
 * service, no inline script or style, requests to the service only (/graphql); colours are set
 * from script through the CSSOM, which style-src does not restrict.
 */
export const PORTAL_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  `${COMMON}; form-action 'self'`;

/**
 * CSP of the dashboard's pages (pages/dashboard.ts): as the portal's, plus `frame-src blob:` for the document PDF it
 * shows in the page (an object URL of the bytes it read from /graphql); nothing from another host.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  `frame-src blob:; ${COMMON}; form-action 'self'`;

/** CSP of the hosted checkout page. */
export const CHECKOUT_CSP = `default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; ${COMMON}`;

/** CSP of the REST reference page (Redoc). */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  COMMON,
  "form-action 'none'",
].join("; ");

/**
 * CSP of the GraphiQL page (pages/graphiql.ts): GraphiQL's script, its start script and Monaco's
 * editor workers are files of the service (no inline script, no `blob:` worker); its styles are
 * partly set inline by Monaco and React, its fonts and icons are `data:` URLs in its stylesheet;
 * requests (queries, and later subscriptions over server-sent events) go to the service itself.
 */
export const GRAPHIQL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  COMMON,
  "form-action 'none'",
].join("; ");

/** The headers every answer carries, whatever its kind (the CSP is added by `securedHead`). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "strict-transport-security": "max-age=15552000; includeSubDomains",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "origin-agent-cluster": "?1",
  "x-dns-prefetch-control": "off",
  "x-download-options": "noopen",
  "x-permitted-cross-domain-policies": "none",
  "x-xss-protection": "0",
};

/**
 * The head node:http writes for an answer with `headers`: its headers, set-cookie as one entry per
 * cookie, and the security headers (over any of the same name; a CSP the answer already has, GraphiQL's or
 * the checkout's, is kept, any other answer gets `API_CSP`), without copying the answer's headers first.
 */
export function securedHead(headers: Headers): Record<string, string | string[]> {
  const head: Record<string, string | string[]> = {};
  headers.forEach((value, name) => (head[name] = value));
  // several Set-Cookie headers stay several (the customer portal sets two: pages/portal.ts)
  const cookies = headers.getSetCookie();
  if (cookies.length) head["set-cookie"] = cookies;
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) head[name] = value;
  head["content-security-policy"] ??= API_CSP;
  return head;
}

/** Request headers a browser may send cross-origin to the API. */
const ALLOWED_HEADERS = "Authorization, Content-Type, Accept, Idempotency-Key, X-Request-Id";
/** Response headers a cross-origin script may read. */
const EXPOSED_HEADERS = "Retry-After, X-Request-Id, Idempotent-Replayed";

/**
 * CORS for /graphql and /v1 (docs/limits.md "CORS"): off unless `origins` lists the request's
 * `Origin` exactly. An allowed origin gets `Access-Control-Allow-Origin: <origin>` (never `*`,
 * never credentials: the API key travels in the Authorization header, not in cookies); a preflight
 * (OPTIONS with Access-Control-Request-Method) from it is answered 204 here. Returns the preflight
 * answer, or null to go on; `decorate` adds the headers to the real answer.
 */
export function cors(
  request: Request,
  origins: readonly string[],
): { preflight: Response | null; decorate(headers: Headers): void } {
  const origin = request.headers.get("origin");
  const allowed = origin !== null && origins.includes(origin);
  const decorate = (headers: Headers) => {
    headers.append("vary", "Origin");
    if (!allowed) return;
    headers.set("access-control-allow-origin", origin);
    headers.set("access-control-expose-headers", EXPOSED_HEADERS);
  };
  if (request.method !== "OPTIONS" || !request.headers.has("access-control-request-method"))
    return { preflight: null, decorate };
  const headers = new Headers();
  if (allowed) {
    headers.set("access-control-allow-methods", "GET, POST, PATCH, DELETE, OPTIONS");
    headers.set("access-control-allow-headers", ALLOWED_HEADERS);
    headers.set("access-control-max-age", "600");
  }
  return { preflight: new Response(null, { status: 204, headers }), decorate };
}
