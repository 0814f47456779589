/**
 * What the bare baselines (bench/baseline.mjs for `npm run bench:http`, bench/usage-baseline.mjs
 * for `npm run bench:usage`) share: Node's `node:http` + a `pg` pool of 10 on DATABASE_URL, the
 * API key authentication, GET /healthz, the response headers, and the server on PORT and HOST, as
 * the service. Each baseline gives its routes: `route(req, res, key, url)` for an authenticated
 * request, `key` = `{ org, test, expiresAt }`.
 *
 * The baselines use the service's own tricks, and no others (issue 37: an honest baseline):
 * - the API key cache of src/services/api-key-cache.ts: a key read by the hex SHA-256 of the
 *   bearer token (the service's `ApiKey` table; the scheme in any case) is served from memory for
 *   API_KEY_CACHE_TTL_SECONDS (default 30 s, as the service) from that read, at most 10,000 keys,
 *   least recently used dropped first; only keys found and not revoked are cached (an unknown key is
 *   read every time), and expiry is checked on every request, cached or not. The last presented
 *   key's hash is kept, as the service's `presentedKeyHash`. Not copied: revocations reaching the
 *   cache through LISTEN/NOTIFY (the bench revokes nothing) and the `lastUsedAt` write (at most one
 *   UPDATE per key a minute in the service);
 * - every statement sent as a named prepared statement (pg's `{ name, text, values }`: parsed and
 *   planned once per connection), as the service's SQL path (src/infra/sql/statement-names.ts);
 * - the headers the service's answers carry: the security headers and the API answers'
 *   Content-Security-Policy (imported from the build, dist/infra/http-security.js, so they cannot
 *   drift), `Vary: Origin` on /v1 and /graphql (CORS, no origin allowed), `X-Request-Id` (the
 *   request's, else a random UUID) and Node's default `Keep-Alive: timeout=5`. Only `Content-Length`
 *   differs: PostgreSQL's JSON text has spaces around `:` and after `,` (the same JSON otherwise).
 */
import http from "node:http";
import crypto from "node:crypto";
import pg from "pg";
import { API_CSP, SECURITY_HEADERS } from "../dist/infra/http-security.js";

export const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

/** `pool.query` of `text` as the named prepared statement `name` (pg prepares it once per connection). */
export const prepared = (name, text) => (values) => pool.query({ name, text, values });

/** ISO 8601 with +00:00, as the REST adapter prints usage timestamps. */
export const iso = (col) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')`;

/** The key by its hash, as the service's `authenticate` reads it: revoked keys not found, expiry checked later. */
const readKey = prepared(
  "baseline_api_key",
  `SELECT "organizationId" AS org, "testMode" AS test, "expiresAt" AS "expiresAt" FROM "ApiKey" WHERE hash = $1 ` +
    `AND "revokedAt" IS NULL`,
);

/** The service's API_KEY_CACHE_TTL_SECONDS (default 30) and its bound (src/services/api-key-cache.ts). */
const KEY_TTL_MS = Number(process.env.API_KEY_CACHE_TTL_SECONDS ?? 30) * 1000;
const KEY_CACHE_MAX_ENTRIES = 10_000;
/** hash -> { key, until }; insertion order is recency order (a hit moves to the end) */
const keyCache = new Map();

/** The key with this hash when cached and within its lifetime, else undefined. */
function cachedKey(hash) {
  const entry = keyCache.get(hash);
  if (!entry) return undefined;
  keyCache.delete(hash);
  if (entry.until <= Date.now()) return undefined;
  keyCache.set(hash, entry);
  return entry.key;
}

function cacheKey(hash, key) {
  if (KEY_TTL_MS <= 0) return;
  keyCache.delete(hash);
  keyCache.set(hash, { key, until: Date.now() + KEY_TTL_MS });
  while (keyCache.size > KEY_CACHE_MAX_ENTRIES) keyCache.delete(keyCache.keys().next().value);
}

/** The last presented key and its hash (one SHA-256 per key change, not per request). */
let lastPresented;
function keyHash(token) {
  if (lastPresented?.token !== token)
    lastPresented = { token, hash: crypto.createHash("sha256").update(token).digest("hex") };
  return lastPresented.hash;
}

/** The authenticated key of `token` (`{ org, test, expiresAt }`), or null: unknown, revoked or expired. */
async function authenticate(token) {
  const hash = keyHash(token);
  let key = cachedKey(hash);
  if (!key) {
    key = (await readKey([hash])).rows[0];
    // unknown and revoked keys are never cached, as the service's
    if (!key) return null;
    cacheKey(hash, key);
  }
  if (key.expiresAt !== null && key.expiresAt.getTime() <= Date.now()) return null;
  return key;
}

const ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/** A `<prefix>_` id of 24 random characters, as the service's. */
export const newId = (prefix) => {
  const bytes = crypto.randomBytes(24);
  let s = "";
  for (const b of bytes) s += ID_ALPHABET[b % ID_ALPHABET.length];
  return `${prefix}_${s}`;
};

/** The headers of every answer, as the service's (src/infra/http-security.ts securedHead: API answers' CSP). */
const HEADERS = { ...SECURITY_HEADERS, "content-security-policy": API_CSP };

export function send(res, status, body, contentType = "application/json; charset=utf-8") {
  const requestId = res.req.headers["x-request-id"];
  res.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
    ...HEADERS,
    // CORS on the API surface (/v1, /graphql): the service varies on Origin (no origin allowed in the bench)
    ...(res.req.url === "/healthz" ? undefined : { vary: "Origin" }),
    "x-request-id": typeof requestId === "string" ? requestId : crypto.randomUUID(),
  });
  res.end(body);
}

export function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Serves `route` behind /healthz and the API key authentication until SIGTERM. */
export function serveBaseline(route) {
  const handle = async (req, res) => {
    const url = req.url ?? "/";
    if (url === "/healthz") return send(res, 200, '{"status":"ok"}', "application/json");
    const token = /^\s*bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
    if (!token) return send(res, 401, '{"error":{"code":"unauthenticated"}}');
    const key = await authenticate(token);
    if (!key) return send(res, 401, '{"error":{"code":"unauthenticated"}}');
    return route(req, res, key, url);
  };
  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) =>
      send(res, 500, JSON.stringify({ error: { code: "internal", message: String(e?.message ?? e) } })),
    );
  });
  // Node's default keep-alive (5 s), as the service's server (`Keep-Alive: timeout=5`)
  server.listen(Number(process.env.PORT ?? 3001), process.env.HOST ?? "127.0.0.1");
  process.on("SIGTERM", () => {
    server.close();
    server.closeAllConnections();
    void pool.end().then(() => process.exit(0));
  });
}
