/**
 * The mail outbox when the process sending is killed with SIGKILL while the SMTP server holds its
 * messages (issue 32, "No work lost or done twice when a process dies"; docs/reminders.md
 * "Delivery", docs/scaling.md "When a process dies").
 *
 * The built service (`node dist/main.js`) runs as a child process with SMTP_URL pointing at a real
 * SMTP server of this test (test/helpers/smtp.ts). One reminder is delivered normally; then several
 * reminders are requested at once, each written with its message already claimed by its request
 * (the claim's lease: 5 minutes) and sent after commit; the SMTP server keeps each message and holds
 * its answer to DATA, as a server that took a message and has not said so yet; the process is
 * killed there. Those messages are the ones the dead process held.
 *
 * Another process (this one, with its own SMTP mailer, as any process may run the outbox's rounds)
 * then delivers what is due: nothing while the leases last, the held messages once they have run out
 * (its clock 6 minutes later). Checked: nothing is lost (every reminder's message `sent`, each
 * received at least once), the delivered one is not sent again, and the duplicates are exactly the
 * held messages, each received twice: at least once delivery, duplicates at most the messages the
 * dead process held, as docs/reminders.md says.
 *
 * PostgreSQL only, the deployment where several processes share the work (docs/scaling.md). The
 * code is written for both databases and passes on the embedded one too (without the skip), where
 * each process and each look at the data opens PGlite, which would about triple the test's cost in
 * CI. That a process on the embedded database takes over the lock a killed one left and finds its
 * committed writes is idempotency-crash.test.ts and runtime.test.ts.
 */
import { afterAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { cloneTemplate, inDatabase, TEST_DB } from "../helpers/databases.js";
import { databaseVariables, serviceEnv, startService, type ServiceProcess } from "../helpers/processes.js";
import { startSmtpServer } from "../helpers/smtp.js";
import { chileanCustomer, startTestServer } from "../helpers/server.js";
import { createLogger } from "../../src/infra/logger.js";
import { createSmtpMailer } from "../../src/infra/mail.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { deliverDueMessages } from "../../src/services/outbox.js";

/** reminders whose messages the killed process holds at the SMTP server */
const HELD = 3;
const MINUTE = 60_000;

const running: ServiceProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const p of running) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGKILL");
      await p.exited;
    }
  }
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe.skipIf(TEST_DB !== "postgres")(
  "mail outbox killed with SIGKILL while the SMTP server holds its messages",
  () => {
    it(
      "nothing is lost, and the only duplicates are the messages the dead process held",
      { timeout: 180_000 },
      async () => {
        const { target, drop } = await cloneTemplate(inject("template"));
        cleanups.push(drop);
        const smtp = await startSmtpServer();
        cleanups.push(() => smtp.close());

        // an organization with a payment to remind about (set up through the API in this process)
        const s = await startTestServer({ target });
        const customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
        const payment = await s.rest("POST", "/v1/payments/", {
          body: { customer, amount: 2380, currency: "CLP", description: "Cuota" },
        });
        expect(payment.status, payment.text).toBe(201);
        const apiKey = s.keys.acme;
        await s.close();

        const service = await startService(serviceEnv({ ...databaseVariables(target), SMTP_URL: smtp.url }));
        running.push(service);
        const remind = (subject: string) =>
          fetch(`${service.url}/v1/reminders/messages/`, {
            method: "POST",
            headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
            body: JSON.stringify({
              payment: payment.body.id,
              recipient: ["pagos@cliente.cl"],
              subject,
              message: "Estimado cliente: le recordamos su pago.",
            }),
          });

        // one reminder delivered before the kill
        const delivered = await remind("Entregado");
        expect(delivered.status).toBe(201);
        expect((await delivered.json()).delivery).toMatchObject({ status: "sent", attempts: 1 });

        // HELD reminders at once: the SMTP server keeps each message and holds its answer; then the process is killed
        let heldCount = 0;
        let allHeld!: () => void;
        const atSmtp = new Promise<void>((resolve) => (allHeld = resolve));
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        smtp.beforeAnswer = async () => {
          if (++heldCount === HELD) allHeld();
          await held;
        };
        const subjects = Array.from({ length: HELD }, (_, i) => `Retenido ${i + 1}`);
        const started = Date.now();
        const requests = subjects.map((subject) => remind(subject).catch((e: Error) => e));
        await Promise.race([atSmtp, service.exited]);
        expect(heldCount, service.lines.join("\n")).toBe(HELD);
        service.child.kill("SIGKILL");
        const killed = Date.now();
        expect(await service.exited).toBe("SIGKILL");
        // no request was answered: each lost its connection
        expect((await Promise.all(requests)).every((r) => r instanceof Error)).toBe(true);
        release();
        smtp.beforeAnswer = async () => {};

        await inDatabase(target, async ({ prisma }) => {
          const messages = await prisma.outboxMessage.findMany({ orderBy: { createdAt: "asc" } });
          // the dead process's claims: attempt 1, leased (the message's nextAttemptAt) 5 minutes ahead
          expect(messages.map((m) => [m.subject, m.status, m.attempts]).sort()).toEqual(
            [["Entregado", "sent", 1], ...subjects.map((subject) => [subject, "pending", 1])].sort(),
          );
          for (const m of messages.filter((m) => m.status === "pending")) {
            expect(m.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(started + 5 * MINUTE);
            expect(m.nextAttemptAt.getTime()).toBeLessThanOrEqual(killed + 5 * MINUTE);
          }

          // another process's rounds: nothing while the leases last, every held message once they have run out
          const deps = {
            prisma,
            mailer: createSmtpMailer(smtp.url),
            logger: createLogger("silent"),
            settings: { ...DEFAULT_SETTINGS, smtpUrl: smtp.url },
          };
          expect(await deliverDueMessages(deps)).toMatchObject({ claimed: 0 });
          expect(await deliverDueMessages(deps, new Date(Date.now() + 6 * MINUTE))).toEqual({
            claimed: HELD,
            sent: HELD,
            retrying: 0,
            failed: 0,
          });
          expect(await deliverDueMessages(deps, new Date(Date.now() + 60 * MINUTE))).toMatchObject({ claimed: 0 });
          expect((await prisma.outboxMessage.findMany()).map((m) => [m.subject, m.status, m.attempts]).sort()).toEqual(
            [["Entregado", "sent", 1], ...subjects.map((subject) => [subject, "sent", 2])].sort(),
          );
          deps.mailer.close();
        });

        // received: the delivered one once; each held one twice (at the kill, and again): duplicates = HELD
        const receivedCount = (subject: string) => smtp.received.filter((m) => m.parsed.subject === subject).length;
        expect(receivedCount("Entregado")).toBe(1);
        expect(subjects.map(receivedCount)).toEqual(subjects.map(() => 2));
        expect(smtp.received).toHaveLength(1 + 2 * HELD);
      },
    );
  },
);
