/**
 * The service's pages and their files over HTTP (docs/operations.md "Pages and their files"), on
 * both databases:
 *
 * - GraphiQL's files, the /docs bundle and /v1/openapi.json are compressed as the request's
 *   Accept-Encoding allows (brotli, gzip, or as they are), each encoding decoding to the same
 *   bytes; hashed file names are the content's hash and cached a year (`immutable`); pages and the
 *   OpenAPI document are revalidated by their ETag (304, no body);
 * - HEAD answers every page and file with the status and headers of its GET and no body, read off
 *   the socket as sent (not through a client that would drop a body anyway).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { sessionKey } from "../helpers/portal.js";

let s: TestServer;
let portalDir: string;
beforeAll(async () => {
  // a built portal of two files, so the test does not depend on `npm run build`
  portalDir = fs.mkdtempSync(path.join(os.tmpdir(), "pages-http-portal-"));
  fs.mkdirSync(path.join(portalDir, "assets"));
  fs.writeFileSync(
    path.join(portalDir, "index.html"),
    '<!doctype html><title>Portal</title><script type="module" src="/portal/assets/index-Ab12.js"></script>',
  );
  fs.writeFileSync(path.join(portalDir, "assets", "index-Ab12.js"), "console.log('portal');\n");
  s = await startTestServer({ portalDir });
});
afterAll(async () => {
  await s?.close();
  fs.rmSync(portalDir, { recursive: true, force: true });
});

interface Raw {
  status: number;
  /** header names in lower case; repeated ones (set-cookie) joined with "\n" */
  headers: Record<string, string>;
  /** every byte after the head, as sent */
  body: Buffer;
}

/**
 * One request over a socket of its own (`Connection: close`), the answer read as the bytes that
 * came: status, headers, and whatever followed the head until the server closed the connection.
 */
function raw(method: string, pathname: string, headers: Record<string, string> = {}): Promise<Raw> {
  const { hostname, port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c) => chunks.push(c));
    socket.on("error", reject);
    socket.on("end", () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf("\r\n\r\n");
      const [statusLine, ...lines] = all.subarray(0, end).toString("latin1").split("\r\n");
      const parsed: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).toLowerCase();
        const value = line.slice(colon + 1).trim();
        parsed[name] = parsed[name] === undefined ? value : `${parsed[name]}\n${value}`;
      }
      resolve({ status: Number(statusLine!.split(" ")[1]), headers: parsed, body: all.subarray(end + 4) });
    });
    const head = Object.entries({ host: `${hostname}:${port}`, connection: "close", ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    // written, not ended: a half-closed connection may be closed by the server before it answers
    socket.write(`${method} ${pathname} HTTP/1.1\r\n${head}\r\n`);
  });
}

const HTML = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex").slice(0, 16);

/** The decoded body of `answer` (brotli, gzip or as it came). */
function decoded(answer: Raw): Buffer {
  const encoding = answer.headers["content-encoding"];
  if (encoding === "br") return zlib.brotliDecompressSync(answer.body);
  if (encoding === "gzip") return zlib.gunzipSync(answer.body);
  expect(encoding).toBeUndefined();
  return answer.body;
}

/** GraphiQL's page and the paths of the files it loads (its stylesheet, scripts, icon, and workers). */
async function graphiqlPaths(): Promise<string[]> {
  const page = await raw("GET", "/graphql", HTML);
  expect(page.status).toBe(200);
  const html = page.body.toString("utf8");
  return [...new Set(html.match(/\/graphiql\/[\w.-]+/g))];
}

describe("GraphiQL's files", () => {
  it("are named by the hash of their content, compressed as Accept-Encoding allows, and cached a year", async () => {
    const files = await graphiqlPaths();
    expect(files.map((f) => f.replace(/-[0-9a-f]{16}\./, "-<hash>.")).sort()).toEqual([
      "/graphiql/editor.worker-<hash>.js",
      "/graphiql/favicon-<hash>.ico",
      "/graphiql/graphiql-<hash>.css",
      "/graphiql/graphiql-<hash>.js",
      "/graphiql/graphql.worker-<hash>.js",
      "/graphiql/json.worker-<hash>.js",
      "/graphiql/start-<hash>.js",
    ]);
    const script = files.find((f) => /\/graphiql-[0-9a-f]{16}\.js$/.test(f))!;
    const plain = await raw("GET", script);
    expect(plain.status).toBe(200);
    expect(plain.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.headers.vary).toBe("Accept-Encoding");
    expect(Number(plain.headers["content-length"])).toBe(plain.body.length);
    expect(plain.body.length).toBeGreaterThan(5_000_000);
    // the name is the content's hash: a new GraphiQL gets a new name, so a year's caching is safe
    expect(script).toContain(`-${sha(plain.body)}.js`);
    expect(plain.headers.etag).toBe(`"${sha(plain.body)}"`);

    for (const [accept, expected] of [
      ["gzip, deflate, br, zstd", "br"], // Chromium: equal weights, brotli first
      ["gzip, deflate", "gzip"],
      ["br;q=0, gzip", "gzip"],
      ["gzip;q=0.5, br;q=0.9", "br"],
      ["gzip;q=1, br;q=0.5", "gzip"],
      ["*", "br"],
      ["identity", undefined],
      ["br;q=0, gzip;q=0", undefined],
      ["deflate", undefined],
    ] as const) {
      const answer = await raw("GET", script, { "accept-encoding": accept });
      expect(answer.status, accept).toBe(200);
      expect(answer.headers["content-encoding"], accept).toBe(expected);
      expect(answer.headers.vary, accept).toBe("Accept-Encoding");
      expect(answer.headers.etag, accept).toBe(`"${sha(plain.body)}${expected ? `-${expected}` : ""}"`);
      expect(Number(answer.headers["content-length"]), accept).toBe(answer.body.length);
      expect(decoded(answer).equals(plain.body), accept).toBe(true);
      if (expected) expect(answer.body.length, accept).toBeLessThan(1_500_000);
    }
  });

  it("answer 304 to If-None-Match of the representation asked, 404 to an unknown name, 405 to POST", async () => {
    const script = (await graphiqlPaths()).find((f) => /\/graphiql-[0-9a-f]{16}\.js$/.test(f))!;
    const br = await raw("GET", script, { "accept-encoding": "br" });
    const etag = br.headers.etag!;
    const again = await raw("GET", script, { "accept-encoding": "br", "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    expect(again.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(again.headers["content-length"]).toBeUndefined();
    // a list, and a weak validator (RFC 9110's weak comparison for If-None-Match)
    expect((await raw("GET", script, { "accept-encoding": "br", "if-none-match": `"x", W/${etag}` })).status).toBe(304);
    // the gzip representation is another one: sent whole
    const gzip = await raw("GET", script, { "accept-encoding": "gzip", "if-none-match": etag });
    expect(gzip.status).toBe(200);
    expect(gzip.headers["content-encoding"]).toBe("gzip");

    const missing = await raw("GET", "/graphiql/graphiql-0000000000000000.js");
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body.toString()).error.code).toBe("not_found");
    const post = await raw("POST", script, { "content-length": "0" });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe("GET, HEAD");
  });
});

describe("the GraphiQL page", () => {
  it("is a small page under a CSP without inline scripts, revalidated by its ETag", async () => {
    const page = await raw("GET", "/graphql", { ...HTML, "accept-encoding": "gzip, deflate, br" });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["cache-control"]).toBe("no-cache");
    expect(page.headers.vary).toContain("Accept");
    const html = decoded(page).toString("utf8");
    expect(html.length).toBeLessThan(4_000);
    expect(html).toContain("<title>Billing API</title>");
    // no inline script: the only <script> with content is the options' JSON, which no browser runs
    const inline = [...html.matchAll(/<script([^>]*)>([^<]+)<\/script>/g)];
    expect(inline.map((m) => m[1])).toEqual([' type="application/json" id="graphiql-config"']);
    const config = JSON.parse(inline[0]![2]!);
    expect(config.options).toEqual({
      title: "Billing API",
      defaultHeaders: '{"Authorization": "Bearer "}',
      shouldPersistHeaders: true,
      defaultEditorToolsVisibility: "headers",
    });
    expect(Object.keys(config.workers).sort()).toEqual(["editorWorkerService", "graphql", "json"]);
    const csp = page.headers["content-security-policy"]!;
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("worker-src 'self';");
    expect(csp).not.toMatch(/sha256|blob:|unsafe-eval/);

    const etag = page.headers.etag!;
    expect(etag).toMatch(/^"[0-9a-f]{16}(-br)?"$/);
    const again = await raw("GET", "/graphql", {
      ...HTML,
      "accept-encoding": "gzip, deflate, br",
      "if-none-match": etag,
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    expect(again.headers["content-security-policy"]).toBe(csp);
    // a GET of /graphql that does not ask for HTML is a GraphQL request, as before
    const query = await raw("GET", "/graphql?query=%7B__typename%7D", { accept: "application/json" });
    expect(query.status).toBe(401);
    expect(JSON.parse(query.body.toString()).errors[0].extensions.code).toBe("authentication_required");
  });
});

describe("the REST reference's files", () => {
  it("serves /docs, its hashed Redoc bundle and the OpenAPI document compressed, cached or revalidated", async () => {
    const page = await raw("GET", "/docs", { ...HTML, "accept-encoding": "br" });
    expect(page.status).toBe(200);
    expect(page.headers["cache-control"]).toBe("no-cache");
    const html = decoded(page).toString("utf8");
    expect(html).toContain("<title>Billing API reference</title>");
    const bundle = /src="(\/docs\/redoc\.standalone-[0-9a-f]{16}\.js)"/.exec(html)![1]!;
    expect((await raw("GET", "/docs", { ...HTML, "if-none-match": page.headers.etag! })).status).toBe(304);

    const plain = await raw("GET", bundle);
    expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(bundle).toContain(`-${sha(plain.body)}.js`);
    const br = await raw("GET", bundle, { "accept-encoding": "gzip, br" });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(decoded(br).equals(plain.body)).toBe(true);
    expect(br.body.length).toBeLessThan(plain.body.length / 3);
    expect((await raw("GET", "/docs/redoc.standalone.js")).status).toBe(404);

    const doc = await raw("GET", "/v1/openapi.json", { "accept-encoding": "gzip" });
    expect(doc.status).toBe(200);
    expect(doc.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(doc.headers["content-encoding"]).toBe("gzip");
    expect(doc.headers["cache-control"]).toBe("no-cache");
    expect(JSON.parse(decoded(doc).toString("utf8")).openapi).toBe("3.1.0");
    const unchanged = await raw("GET", "/v1/openapi.json", {
      "accept-encoding": "gzip",
      "if-none-match": doc.headers.etag!,
    });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body.length).toBe(0);
  });
});

/** Headers that differ between any two answers (the date, the request's id), left out of the comparison. */
const PER_ANSWER = new Set(["date", "x-request-id"]);

/** The headers of `answer` to compare, with each Set-Cookie reduced to its name (the values are new each time). */
function comparable(answer: Raw): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (PER_ANSWER.has(name)) continue;
    out[name] =
      name === "set-cookie"
        ? value
            .split("\n")
            .map((c) => c.slice(0, c.indexOf("=")))
            .join("\n")
        : value;
  }
  return out;
}

describe("HEAD", () => {
  it("answers every page and file with its GET's status and headers and no body", async () => {
    // a customer with a portal session, and a redirect payment waiting at its hosted checkout
    const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
    const portal = await sessionKey(s, customer);
    const source = (
      await s.rest("POST", "/v1/sources/", {
        body: { gateway: "redirect", customer, return_url: "https://shop.example/return" },
      })
    ).body;
    const payment = (await s.rest("POST", "/v1/payments/", { body: { amount: 2916, currency: "CLP", customer } })).body;
    expect(
      (await s.rest("POST", `/v1/payments/${payment.id}/authorize/`, { body: { source: source.id } })).status,
    ).toBe(200);
    expect((await s.rest("GET", `/v1/payments/${payment.id}/pay/`)).status).toBe(200);
    const checkout = new URL(source.data.redirect_url).pathname;

    const docs = decoded(await raw("GET", "/docs")).toString("utf8");
    const bundle = /src="(\/docs\/redoc\.standalone-[0-9a-f]{16}\.js)"/.exec(docs)![1]!;
    const graphiql = await graphiqlPaths();
    const br = { "accept-encoding": "gzip, deflate, br" };
    const cases: [string, Record<string, string>, number][] = [
      ["/graphql", HTML, 200],
      ["/graphql", { ...HTML, ...br }, 200],
      ...graphiql.map((f): [string, Record<string, string>, number] => [f, br, 200]),
      [graphiql[0]!, {}, 200],
      ["/graphiql/graphiql-0000000000000000.js", {}, 404],
      ["/docs", HTML, 200],
      ["/docs/", HTML, 200],
      [bundle, br, 200],
      ["/v1/openapi.json", br, 200],
      ["/v1/openapi.json", {}, 200],
      ["/portal/", HTML, 200],
      [`/portal/${portal.key}`, HTML, 200],
      ["/portal/cs_unknown", HTML, 404],
      ["/portal/assets/index-Ab12.js", {}, 200],
      [checkout, HTML, 200],
      ["/checkout/unknown_token", HTML, 404],
      ["/healthz", {}, 200],
      ["/readyz", {}, 200],
    ];
    for (const [pathname, headers, status] of cases) {
      const get = await raw("GET", pathname, headers);
      const head = await raw("HEAD", pathname, headers);
      const label = `HEAD ${pathname} ${JSON.stringify(headers)}`;
      expect(get.status, label).toBe(status);
      expect(head.status, label).toBe(get.status);
      expect(comparable(head), label).toEqual(comparable(get));
      expect(head.body.length, label).toBe(0);
      expect(Number(head.headers["content-length"]), label).toBe(get.body.length);
      expect(get.body.length, label).toBeGreaterThan(0);
    }
    // a conditional HEAD is answered like its GET too
    const etag = (await raw("GET", "/docs")).headers.etag!;
    const conditional = await raw("HEAD", "/docs", { "if-none-match": etag });
    expect(conditional.status).toBe(304);
    expect(conditional.body.length).toBe(0);
  });
});
