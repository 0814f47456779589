/**
 * Bounded shutdown of the built service (docs/operations.md "Start and stop", SHUTDOWN_GRACE_SECONDS):
 * after an ordinary workload over keep-alive connections (orders and credit notes created,
 * finalized, their PDFs rendered in the PDF thread, a credit note read with `?expand=invoice`),
 * SIGTERM ends the process within the grace period (plus 2 s) with exit code 0, a request in flight
 * at SIGTERM still answered. Once with the service's stdout read as it comes, once with a reader
 * that stops reading (a stalled log pipe): there the process used to close its port and then never
 * exit, pino's flush at exit waiting for the full pipe forever.
 *
 * On both databases (the pglite and postgres projects).
 */
import net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { cloneTemplate, TEST_DB } from "../helpers/databases.js";
import { createKey, portOpen, serviceEnv, startService, type ServiceProcess } from "../helpers/processes.js";

/** The grace period the service is started with (s): short, to keep the test fast. */
const GRACE_SECONDS = 3;

const running: ServiceProcess[] = [];
let env: NodeJS.ProcessEnv;
let key: string;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await cloneTemplate(inject("template")); // migrated
  drop = database.drop;
  env = serviceEnv(
    database.target.kind === "postgres"
      ? { DATABASE_URL: database.target.url, SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS) }
      : {
          BILLING_DATA_DIR: database.target.dir!.replace(/\/pglite$/, ""),
          SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
        },
  );
  key = createKey(env);
}, 120_000);

afterEach(async () => {
  for (const p of running.splice(0)) {
    p.child.stdout?.resume();
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  }
});
afterAll(async () => {
  await drop?.();
});

/** A JSON API call over node's fetch, whose connections stay open (keep-alive) after the answer. */
async function api(url: string, method: string, pathname: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${pathname} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}

/** Orders and credit notes created and finalized, their PDFs fetched, a credit note read with its invoice. */
async function workload(url: string): Promise<void> {
  const customer = await api(url, "POST", "/v1/customers/", { name: "Cierre SpA", country: "CL" });
  await Promise.all(
    [1, 2].map(async () => {
      const order = await api(url, "POST", "/v1/orders/", {
        customer: customer.id,
        shipping_type: "1",
        address: "Camino Lo Boza 120",
        lines: [
          { name: "Cajas", quantity: 2, amount: 1000 },
          { name: "Flete", amount: 500, exempt: true },
        ],
      });
      await api(url, "GET", `/v1/orders/${order.id}/finalize/`);
      expect((await api(url, "GET", `/v1/orders/${order.id}/pdf/`)).file).toBeTruthy();
      const invoice = await api(url, "POST", "/v1/invoices/", {
        customer: customer.id,
        lines: [{ name: "Consultoría", quantity: 1, amount: 10000 }],
      });
      await api(url, "GET", `/v1/invoices/${invoice.id}/finalize/`);
      const note = await api(url, "POST", "/v1/creditnotes/", {
        invoice: invoice.id,
        lines: [{ name: "Devolución", quantity: 1, amount: 1000 }],
        note: "Producto dañado",
      });
      await api(url, "GET", `/v1/creditnotes/${note.id}/finalize/`);
      expect((await api(url, "GET", `/v1/creditnotes/${note.id}/pdf/`)).file).toBeTruthy();
      expect((await api(url, "GET", `/v1/creditnotes/${note.id}/?expand=invoice`)).invoice.id).toBe(invoice.id);
    }),
  );
}

/**
 * A POST whose headers and half its body are sent: in flight until `finish` sends the rest;
 * `answer` resolves with everything the server wrote once it closed the connection.
 */
async function requestInFlight(url: string): Promise<{ finish(): void; answer: Promise<string> }> {
  const body = JSON.stringify({ name: "En vuelo SpA", country: "CL" });
  const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
  await new Promise((r) => socket.once("connect", r));
  let answer = "";
  socket.on("data", (d) => (answer += d));
  const closed = new Promise<string>((r) => socket.once("close", () => r(answer)));
  socket.write(
    `POST /v1/customers/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: ` +
      `application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
  );
  // the server reads the headers: a connection whose request has not been read counts as idle
  await new Promise((r) => setTimeout(r, 1000));
  return { finish: () => socket.write(body.slice(10)), answer: closed };
}

/** The exit code of `service`, or "running" when it has not exited `ms` milliseconds from now. */
function exitWithin(service: ServiceProcess, ms: number): Promise<number | string> {
  return Promise.race([service.exited, new Promise<string>((r) => setTimeout(() => r("running"), Math.max(0, ms)))]);
}

describe(`SIGTERM after a workload over keep-alive connections (${TEST_DB})`, () => {
  for (const stdout of ["read", "no longer read"] as const) {
    it(
      `exits 0 within SHUTDOWN_GRACE_SECONDS + 2 s, the request in flight answered; stdout ${stdout}`,
      { timeout: 180_000 },
      async () => {
        const service = await startService(env);
        running.push(service);
        await workload(service.url);
        if (stdout === "no longer read") {
          // the service's log pipe stalls: its reader takes nothing more (the lines wait in the pipe and in the
          // service), while keep-alive requests with long paths fill it with their log lines
          service.child.stdout!.pause();
          const long = "x".repeat(6000);
          for (let i = 0; i < 40; i++) {
            const res = await fetch(`${service.url}/v1/customers/cus_${long}${i}/`, {
              headers: { authorization: `Bearer ${key}` },
            });
            expect(res.status).toBe(404);
            await res.arrayBuffer();
          }
        }
        const inFlight = await requestInFlight(service.url);
        // the workload's keep-alive connections stay open, idle: the client went away without closing them
        const port = Number(new URL(service.url).port);
        service.child.kill("SIGTERM");
        const signalled = performance.now();
        // the port closes as the shutdown starts (the log may not be read): then the rest of the body goes
        while ((await portOpen(port)) && performance.now() - signalled < 5_000)
          await new Promise((r) => setTimeout(r, 50));
        inFlight.finish();
        const answer = await inFlight.answer;
        expect(answer).toMatch(/^HTTP\/1\.1 201 /);
        expect(answer.toLowerCase()).toContain("connection: close");
        const code = await exitWithin(service, (GRACE_SECONDS + 2) * 1000 - (performance.now() - signalled));
        const seconds = (performance.now() - signalled) / 1000;
        service.child.stdout!.resume();
        expect(code, `exit within ${GRACE_SECONDS + 2} s of SIGTERM (${seconds.toFixed(1)} s)`).toBe(0);
        if (stdout === "read") {
          await new Promise((r) => setTimeout(r, 100));
          expect(service.logs().map((l) => l.msg)).toContain("stopped");
        }
      },
    );
  }
});
