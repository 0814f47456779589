/**
 * The webhook receiver of `npm run bench:webhooks` (bench/webhooks.ts, docs/performance.md "Webhook delivery"), a
 * child process of the bench: `node:http` servers on 127.0.0.1 with keep-alive on, one port per endpoint (so each
 * endpoint is a host of its own for the service's connection pools, as real endpoints are), that verify EVERY
 * message with the `standardwebhooks` package over its raw body and answer 204 (400 when it does not verify).
 *
 * Driven by the bench over IPC (`process.send`): each command `{ seq, cmd, ... }` is answered `{ seq, ... }`.
 * - `listen {count}`: opens `count` servers (again on the same ports after `close`); answers `{ ports }`.
 * - `close`: closes every server and its connections: attempts are refused until the next `listen`.
 * - `secret {path, secret}`: the endpoint at URL path `path` signs with `secret` (whsec_...).
 * - `hold` / `release`: while held, verified messages are kept unanswered; `release` answers them all (204) and
 *   notes its time.
 * - `unavailable {on}`: while on, every message is answered 503 (no Retry-After) without being verified: a receiver
 *   that is down behind a proxy, its connections kept alive.
 * - `track {on}`: keep each first arrival's time by `webhook-id` (the latency samples).
 * - `reset`: forgets every count, key and arrival.
 * - `stats`: `{ received, unique, duplicates, invalid, unavailable, held, firstAt, lastAt, releasedAt }`; times are
 *   ms since the epoch with fractions (`performance.timeOrigin + performance.now()`, the bench's clock too).
 * - `keys`: the `<path> <webhook-id>` of every message answered 2xx.
 * - `arrivals`: `[[webhook-id, first arrival], ...]` while tracked.
 *
 * Counting: a message is keyed by its endpoint (URL path) and `webhook-id`; `unique` counts keys answered 2xx,
 * `duplicates` a key answered 2xx again.
 */
import http from "node:http";
import { Webhook } from "standardwebhooks";

const now = () => performance.timeOrigin + performance.now();

/** @type {Map<string, Webhook>} */
const verifiers = new Map();
/** @type {http.Server[]} */
let servers = [];
/** @type {number[]} */
let ports = [];
let holding = false;
/** @type {{ res: http.ServerResponse, key: string }[]} */
let held = [];
let tracking = false;
let unavailable = false;

const zero = () => ({ received: 0, duplicates: 0, invalid: 0, unavailable: 0, firstAt: 0, lastAt: 0, releasedAt: 0 });
let counts = zero();
/** @type {Set<string>} */
let answered = new Set();
/** @type {Map<string, number>} */
let arrivals = new Map();

/** Counts a 2xx answer of message `key` (`<path> <webhook-id>`). */
function answeredOk(key) {
  if (answered.has(key)) counts.duplicates++;
  else {
    answered.add(key);
    counts.lastAt = now();
  }
}

function handle(req, res) {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const at = now();
    counts.received++;
    if (!counts.firstAt) counts.firstAt = at;
    if (unavailable) {
      counts.unavailable++;
      res.writeHead(503).end();
      return;
    }
    const path = req.url ?? "/";
    const body = Buffer.concat(chunks).toString("utf8");
    try {
      const verifier = verifiers.get(path);
      if (!verifier) throw new Error(`no secret for ${path}`);
      verifier.verify(body, req.headers);
    } catch {
      counts.invalid++;
      res.writeHead(400).end();
      return;
    }
    const id = String(req.headers["webhook-id"]);
    if (tracking && !arrivals.has(id)) arrivals.set(id, at);
    const key = `${path} ${id}`;
    if (holding) {
      held.push({ res, key });
      return;
    }
    res.writeHead(204).end();
    answeredOk(key);
  });
}

async function listen(count) {
  const wanted = ports.length ? ports : Array.from({ length: count }, () => 0);
  servers = await Promise.all(
    wanted.map(
      (port) =>
        new Promise((resolve, reject) => {
          const server = http.createServer({ keepAlive: true }, handle);
          // the service keeps idle connections open for its next messages: do not close them first
          server.keepAliveTimeout = 120_000;
          server.headersTimeout = 130_000;
          server.once("error", reject);
          server.listen(port, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  ports = servers.map((s) => s.address().port);
  return { ports };
}

async function close() {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise((resolve) => {
          s.close(() => resolve(undefined));
          s.closeAllConnections();
        }),
    ),
  );
  servers = [];
  return {};
}

function release() {
  holding = false;
  counts.releasedAt = now();
  for (const { res, key } of held) {
    if (res.destroyed) continue;
    res.writeHead(204).end();
    answeredOk(key);
  }
  held = [];
  return {};
}

const commands = {
  listen: (m) => listen(m.count),
  close,
  secret: (m) => {
    verifiers.set(m.path, new Webhook(m.secret));
    return {};
  },
  hold: () => {
    holding = true;
    return {};
  },
  release,
  unavailable: (m) => {
    unavailable = m.on;
    return {};
  },
  track: (m) => {
    tracking = m.on;
    return {};
  },
  reset: () => {
    counts = zero();
    answered = new Set();
    arrivals = new Map();
    return {};
  },
  stats: () => ({ ...counts, unique: answered.size, held: held.length }),
  keys: () => ({ keys: [...answered] }),
  arrivals: () => ({ arrivals: [...arrivals] }),
};

process.on("message", async (m) => {
  try {
    const reply = await commands[m.cmd](m);
    process.send({ seq: m.seq, ...reply });
  } catch (e) {
    process.send({ seq: m.seq, error: String(e?.stack ?? e) });
  }
});
process.on("disconnect", () => process.exit(0));
process.send({ ready: true });
