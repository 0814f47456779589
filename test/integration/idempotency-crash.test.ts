/**
 * Idempotency keys after kill -9 (issue 15 "Idempotency after crashes"; docs/decisions.md
 * "Idempotency keys"). The built service runs as a child process (PostgreSQL in the postgres
 * project, the embedded database in the pglite project) and takes a stream of keyed writes
 * (customers and payments, each with its own Idempotency-Key) from several clients at once; it is
 * killed with SIGKILL in the middle and started again, and every key is sent again with the same
 * body. Each key must end with exactly one row: an answered key replays its answer byte for byte,
 * a key whose request was in flight either replays (it had committed) or runs now (it had not);
 * none is left "still running". `CRASH_REPORT=1` prints how the in-flight keys ended (replayed: they
 * had committed; ran: they had not).
 */
import fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { cloneTemplate, TEST_DB, templateDataDir } from "../helpers/databases.js";
import { createKey, serviceEnv, startService, type ServiceProcess } from "../helpers/processes.js";

const WRITERS = 8;
/** answered writes before the kill */
const ANSWERED_BEFORE_KILL = 40;

const running: ServiceProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const p of running) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  }
  for (const cleanup of cleanups) await cleanup();
});

/** The service's environment on a database of its own, cloned from the migrated template. */
async function serviceDatabase(): Promise<NodeJS.ProcessEnv> {
  if (TEST_DB === "postgres") {
    const { target, drop } = await cloneTemplate(inject("template"));
    cleanups.push(drop);
    return serviceEnv({ DATABASE_URL: (target as { url: string }).url });
  }
  const dir = templateDataDir(inject("template"), "billing-idempotency-crash-");
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return serviceEnv({ BILLING_DATA_DIR: dir });
}

interface Answer {
  status: number;
  text: string;
  replayed: string | null;
}

async function send(
  url: string,
  apiKey: string,
  pathname: string,
  body: unknown,
  idempotencyKey?: string,
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  const res = await fetch(`${url}${pathname}`, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), replayed: res.headers.get("idempotent-replayed") };
}

/** Every node of a GraphQL connection `field` (pages of 100). */
async function all(url: string, apiKey: string, field: "customers" | "payments", select: string): Promise<any[]> {
  const nodes: any[] = [];
  for (let after: string | null = null; ;) {
    const res = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        query:
          `query($after: String) { ${field}(first: 100, after: $after) { pageInfo { hasNextPage endCursor } ` +
          `edges { node { ${select} } } } }`,
        variables: { after },
      }),
    });
    const page: any = await res.json();
    expect(page.errors).toBeUndefined();
    nodes.push(...page.data[field].edges.map((e: any) => e.node));
    if (!page.data[field].pageInfo.hasNextPage) return nodes;
    after = page.data[field].pageInfo.endCursor;
  }
}

describe("Idempotency-Key after kill -9", () => {
  it(
    "every key sent before the kill ends with exactly one row, and an answered key replays its answer",
    { timeout: 300_000 },
    async () => {
      const env = await serviceDatabase();
      const apiKey = createKey(env); // the CLI migrates a new embedded database and creates the key
      const service = await startService(env);
      running.push(service);
      const customer = JSON.parse(
        (await send(service.url, apiKey, "/v1/customers/", { name: "Pagador SpA", country: "CL" })).text,
      ).id as string;

      // key -> what was sent, and the answer when one came back before the kill
      const sent = new Map<string, { path: string; body: Record<string, unknown>; answer?: Answer }>();
      let next = 0;
      let stop = false;
      const writer = async () => {
        while (!stop) {
          const i = next++;
          const key = `crash-${i}`;
          const write =
            i % 2 === 0
              ? { path: "/v1/customers/", body: { name: `Crash ${i}`, country: "CL" } }
              : {
                  path: "/v1/payments/",
                  body: { customer, amount: 1000 + i, currency: "CLP", description: `Crash ${i}` },
                };
          sent.set(key, write);
          try {
            const answer = await send(service.url, apiKey, write.path, write.body, key);
            if (answer.status !== 201) throw new Error(`${key} answered ${answer.status}: ${answer.text}`);
            sent.get(key)!.answer = answer;
          } catch (e) {
            if (!stop) throw e;
          }
        }
      };
      const writers = Array.from({ length: WRITERS }, writer);
      const answered = () => [...sent.values()].filter((w) => w.answer).length;
      while (answered() < ANSWERED_BEFORE_KILL) await new Promise((r) => setTimeout(r, 20));
      // every writer is waiting for an answer right now: those requests are in flight (an answer
      // already on its way may still arrive after the kill: it is checked like the others)
      stop = true;
      const inFlight = new Set([...sent.entries()].filter(([, w]) => !w.answer).map(([key]) => key));
      service.child.kill("SIGKILL");
      await service.exited;
      await Promise.all(writers);
      expect(inFlight.size).toBe(WRITERS);

      const again = await startService(env);
      running.push(again);
      const outcomes = { replayedAnswered: 0, replayedInFlight: 0, ranInFlight: 0 };
      for (const [key, write] of sent) {
        const retry = await send(again.url, apiKey, write.path, write.body, key);
        expect(retry.status, `${key}: ${retry.text}`).toBe(201);
        if (write.answer) expect(retry, key).toEqual({ ...write.answer, replayed: "true" });
        if (!inFlight.has(key)) outcomes.replayedAnswered++;
        else if (retry.replayed === "true") outcomes.replayedInFlight++;
        else outcomes.ranInFlight++;
        // a second retry always replays the same answer
        expect(await send(again.url, apiKey, write.path, write.body, key), key).toEqual({ ...retry, replayed: "true" });
      }
      if (process.env.CRASH_REPORT) console.log(JSON.stringify({ sent: sent.size, ...outcomes }));
      expect(outcomes.replayedAnswered).toBe(sent.size - WRITERS);
      expect(outcomes.replayedInFlight + outcomes.ranInFlight).toBe(WRITERS);

      // exactly one row per key
      const names = (await all(again.url, apiKey, "customers", "name"))
        .map((c) => c.name)
        .filter((n: string) => n.startsWith("Crash "));
      const descriptions = (await all(again.url, apiKey, "payments", "description"))
        .map((p) => p.description)
        .filter((d: string | null) => d?.startsWith("Crash "));
      const expected = (parity: number) =>
        [...sent.values()]
          .filter((w) => Number(String(w.body.name ?? w.body.description).slice(6)) % 2 === parity)
          .map((w) => String(w.body.name ?? w.body.description))
          .sort();
      expect(names.sort()).toEqual(expected(0));
      expect(descriptions.sort()).toEqual(expected(1));
      again.child.kill("SIGTERM");
      expect(await again.exited).toBe(0);
    },
  );
});
