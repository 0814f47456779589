/**
 * `events listen` (docs/webhooks.md "Local development: events listen"), the built CLI as a developer
 * runs it beside a running server: it prints each event as the REST API prints it, forwards it to a
 * local receiver signed with the secret it printed (verified with the `standardwebhooks` package),
 * says when its connection broke and comes back by itself, stops with 0 on SIGINT, and exits 1 with
 * the server's message for a refused key. It talks to the server over HTTP only (here through a
 * TCP proxy the test can cut). Beside the real server process, SIGTERM ends the stream at once
 * (not after the drain's grace period) and the CLI reconnects once the server is back. On one
 * database: the CLI never touches it.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { createKey, ROOT, serviceEnv, startProcess, startService, type ServiceProcess } from "../helpers/processes.js";
import { TEST_DB, templateDataDir } from "../helpers/databases.js";

/** A TCP proxy to `port` whose open connections the test can cut. */
async function startProxy(port: number) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut: () => sockets.forEach((s) => s.destroy()),
    close: () => {
      sockets.forEach((s) => s.destroy());
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Resolves with the first output line matching `pattern` (stdout and stderr), after `from` lines. */
async function line(p: ServiceProcess, pattern: RegExp, from = 0, ms = 30_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    for (const l of p.lines.slice(from)) {
      const m = pattern.exec(l);
      if (m) return m;
    }
    if (Date.now() > deadline) throw new Error(`no line matching ${pattern} in:\n${p.lines.join("\n")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(TEST_DB === "postgres")("events listen", () => {
  let s: TestServer;
  let receiver: WebhookReceiver;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let listener: ServiceProcess | undefined;
  beforeAll(async () => {
    s = await startTestServer();
    receiver = await startWebhookReceiver();
    proxy = await startProxy(Number(new URL(s.url).port));
  });
  afterAll(async () => {
    listener?.child.kill("SIGKILL");
    await proxy?.close();
    await receiver?.close();
    await s?.close();
  });

  it(
    "prints each event as REST does and forwards it signed with the printed secret; reconnects after the " +
      "connection breaks; exits 0 on SIGINT",
    async () => {
      listener = startProcess(
        process.execPath,
        [
          path.join(ROOT, "dist", "cli.js"),
          "events",
          "listen",
          "--url",
          proxy.url,
          "--api-key",
          s.keys.acme,
          "--forward-to",
          receiver.url,
        ],
        serviceEnv({}),
      );
      const [, secret] = await line(listener, /^Ready! Your webhook signing secret is (whsec_\S+) \(\^C to quit\)$/);
      receiver.secrets.push(secret);

      const created = await s.rest("POST", "/v1/customers/", { body: chileanCustomer() });
      expect(created.status).toBe(201);
      const [message] = await receiver.waitFor(1);
      expect(message.verifiedWith).toEqual([secret]);
      expect(message.headers["user-agent"]).toBe("billing-cli-events-listen/1");
      expect(message.payload.type).toBe("customer.created");
      expect(message.payload.data.object).toEqual((await s.rest("GET", `/v1/customers/${created.body.id}/`)).body);

      // stdout: the event exactly as GET /v1/events/{id} prints it
      const [printed] = await line(listener, /^\{"id":"evt_.*$/);
      const rest = await s.rest("GET", `/v1/events/${message.id}/`);
      expect(rest.status).toBe(200);
      expect(JSON.parse(printed)).toEqual(rest.body);
      expect(printed).toBe(rest.text.trim());
      await line(
        listener,
        new RegExp(`^<-- \\[204\\] POST ${receiver.url} customer\\.created ${message.id} \\(\\d+ ms\\)$`),
      );

      // the connection breaks (a server restart, a network failure): it says so, comes back, and goes on
      const before = listener.lines.length;
      proxy.cut();
      await line(listener, /^Lost the connection to http:\/\/127\.0\.0\.1:\d+: .*; retrying in 1 s/, before);
      await line(listener, /^Reconnected to http:\/\/127\.0\.0\.1:\d+\.$/, before);
      const updated = await s.rest("PATCH", `/v1/customers/${created.body.id}/`, { body: { name: "Otro Nombre SpA" } });
      expect(updated.status).toBe(200);
      const [, second] = await receiver.waitFor(2);
      expect(second.payload.type).toBe("customer.updated");
      expect(second.verifiedWith).toEqual([secret]);
      await line(listener, /^\{"id":"evt_.*"type":"customer\.updated".*$/, before);

      listener.child.kill("SIGINT");
      expect(await listener.exited).toBe(0);
      listener = undefined;
    },
  );

  it("exits 1 with the server's message for a refused key, and for unknown event types", async () => {
    // run asynchronously: the server answers from this process
    const run = async (args: string[]) => {
      const p = startProcess(process.execPath, [path.join(ROOT, "dist", "cli.js"), ...args], serviceEnv({}));
      return { status: await p.exited, lines: p.lines };
    };
    const refused = await run([
      "events",
      "listen",
      "--url",
      s.url,
      "--api-key",
      "sk_test_0000000000000000000000000000",
    ]);
    expect(refused).toEqual({
      status: 1,
      lines: ["error: the server refused the API key (401): Unknown or revoked API key"],
    });
    const unknown = await run([
      ...["events", "listen", "--url", s.url, "--api-key", s.keys.acme],
      ...["--events", "customer.created,invoice.lost"],
    ]);
    expect(unknown.status).toBe(1);
    expect(unknown.lines).toHaveLength(1);
    expect(unknown.lines[0]).toMatch(
      /^error: --events must list event types separated by commas \(unknown: invoice\.lost; known: customer\.created, /,
    );
  });

  it(
    "beside the real server (dist/main.js): SIGTERM ends its stream at once with service_unavailable, and it " +
      "reconnects when the server is back on its port",
    { timeout: 180_000 },
    async () => {
      const dir = templateDataDir(inject("template"), "billing-listen-");
      const port = await new Promise<number>((resolve) => {
        const probe = net.createServer().listen(0, "127.0.0.1", () => {
          const { port } = probe.address() as net.AddressInfo;
          probe.close(() => resolve(port));
        });
      });
      const env = serviceEnv({ BILLING_DATA_DIR: dir, PORT: String(port) });
      const key = createKey(env);
      let service = await startService(env);
      const args = ["events", "listen", "--url", service.url, "--api-key", key];
      const listen = startProcess(process.execPath, [path.join(ROOT, "dist", "cli.js"), ...args], env);
      try {
        await line(listen, /^Ready! Listening for events \(\^C to quit\)$/);
        const before = listen.lines.length;
        const stopping = performance.now();
        service.child.kill("SIGTERM");
        await line(listen, /^Lost the connection to .*: The server is shutting down and ended this stream/, before);
        expect(await service.exited).toBe(0);
        // the stream did not hold the 10 s drain
        expect(performance.now() - stopping).toBeLessThan(8_000);
        service = await startService(env);
        await line(listen, /^Reconnected to http:\/\/127\.0\.0\.1:\d+\.$/, before, 60_000);
        const created = await fetch(`${service.url}/v1/customers/`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify(chileanCustomer()),
        });
        expect(created.status).toBe(201);
        const customer = (await created.json()) as { id: string };
        const [printed] = await line(listen, /^\{"id":"evt_.*$/, before);
        expect(JSON.parse(printed)).toMatchObject({ type: "customer.created", data: { object: { id: customer.id } } });
        listen.child.kill("SIGINT");
        expect(await listen.exited).toBe(0);
      } finally {
        listen.child.kill("SIGKILL");
        service.child.kill("SIGTERM");
        await service.exited;
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
