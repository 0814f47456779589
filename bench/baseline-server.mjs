/**
 * What the bare baselines (bench/baseline.mjs for `npm run bench:http`, bench/usage-baseline.mjs
 * for `npm run bench:usage`) share: Node's `node:http` + a `pg` pool of 10 on DATABASE_URL, the
 * API key looked up by the hex SHA-256 of the bearer token in the service's `ApiKey` table
 * (revoked and expired keys refused, 401), GET /healthz, and the server on PORT and HOST, as the
 * service. Each baseline gives its routes: `route(req, res, key, url)` for an authenticated
 * request, `key` = `{ org, test }`.
 */
import http from "node:http";
import crypto from "node:crypto";
import pg from "pg";

export const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

/** ISO 8601 with +00:00, as the REST adapter prints usage timestamps. */
export const iso = (col) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')`;

const AUTH =
  `SELECT "organizationId" AS org, "testMode" AS test FROM "ApiKey" WHERE hash = $1 AND "revokedAt" IS ` +
  `NULL AND ("expiresAt" IS NULL OR "expiresAt" > now())`;

const ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/** A `<prefix>_` id of 24 random characters, as the service's. */
export const newId = (prefix) => {
  const bytes = crypto.randomBytes(24);
  let s = "";
  for (const b of bytes) s += ID_ALPHABET[b % ID_ALPHABET.length];
  return `${prefix}_${s}`;
};

export function send(res, status, body) {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
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

/** Serves `route` behind /healthz and the API key lookup until SIGTERM. */
export function serveBaseline(route) {
  const handle = async (req, res) => {
    const url = req.url ?? "/";
    if (url === "/healthz") return send(res, 200, '{"status":"ok"}');
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (!token) return send(res, 401, '{"error":{"code":"unauthenticated"}}');
    const hash = crypto.createHash("sha256").update(token).digest("hex");
    const key = (await pool.query(AUTH, [hash])).rows[0];
    if (!key) return send(res, 401, '{"error":{"code":"unauthenticated"}}');
    return route(req, res, key, url);
  };
  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) =>
      send(res, 500, JSON.stringify({ error: { code: "internal", message: String(e?.message ?? e) } })),
    );
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env.PORT ?? 3001), process.env.HOST ?? "127.0.0.1");
  process.on("SIGTERM", () => {
    server.close();
    server.closeAllConnections();
    void pool.end().then(() => process.exit(0));
  });
}
