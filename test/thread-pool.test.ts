/**
 * infra/threads/pool.ts, the worker pool (piscina) that renders PDFs and signs tax documents: a task
 * runs in a thread and its result comes back; an error a task throws comes back as the caller's
 * error, a DomainError with its class, status and fields; past the queue limit a task is refused
 * with 503 service_unavailable; an aborted signal takes a waiting task out of the queue.
 * (The PDFs of documents and swaps and the SII signing through the pool are checked end to end by
 * the integration tests: printed-documents, swaps, sii-bulk, sii-issue.)
 */
import { afterAll, describe, expect, it } from "vitest";
import { ServiceUnavailableError } from "../src/domain/errors.js";
import { closeThreads, MAX_QUEUE, renderSwapPdfOffThread, runInThread, THREADS } from "../src/infra/threads/pool.js";
import type { SwapPdfData } from "../src/infra/swap-pdf.js";

const swap: SwapPdfData = {
  id: "swap_1",
  receiver: "Receptor SpA",
  receiverTaxId: "76042235-5",
  received: new Date("2026-12-01T12:00:00Z"),
  status: null,
  replyBy: null,
  replyDate: null,
  purchases: [
    {
      type: 33,
      folio: 12,
      issuerTaxId: "12345678-5",
      issuerName: "Emisor Ltda.",
      date: "2026-11-30",
      amount: "10000",
      exempt: "0",
      tax: "1900",
      total: "11900",
    },
  ],
};

afterAll(closeThreads);

describe("the worker pool", () => {
  it("renders a PDF in a thread: the bytes come back as a Buffer", async () => {
    const pdf = await renderSwapPdfOffThread(swap);
    expect(Buffer.isBuffer(pdf)).toBe(true);
    expect(pdf.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    expect(pdf.subarray(-6).toString("latin1")).toMatch(/%%EOF/);
  });

  // a DomainError comes back with its class and fields: sii-bulk.test.ts (a 61-line 33 is a validation_error)
  it("an error a task throws comes back with its name and message", async () => {
    const job = { agency: "nowhere", credentials: {}, authorizations: {}, documents: [] } as unknown as Parameters<
      typeof runInThread<"issueLocalFiles">
    >[1];
    const error = await runInThread("issueLocalFiles", job).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe("Error");
    expect((error as Error).message).toBe("unknown tax agency nowhere");
  });

  it("refuses a task past the queue limit (503); an aborted signal takes waiting tasks out", async () => {
    const controller = new AbortController();
    // THREADS running (or starting), MAX_QUEUE waiting: three more are refused at once
    const runs = Array.from({ length: THREADS + MAX_QUEUE + 3 }, () =>
      renderSwapPdfOffThread(swap, { signal: controller.signal }).then(
        () => "done",
        (e: unknown) => e,
      ),
    );
    const refused = await new Promise((resolve) => {
      for (const run of runs) void run.then((o) => o instanceof ServiceUnavailableError && resolve(o));
    });
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect((refused as ServiceUnavailableError).status).toBe(503);
    controller.abort();
    const outcomes = await Promise.all(runs);
    const names = outcomes.map((o) => (o === "done" ? "done" : (o as Error).name));
    // every task ended: done before the abort, aborted, or refused (three at least)
    expect(names.filter((n) => n === "ServiceUnavailableError").length).toBeGreaterThanOrEqual(3);
    expect(names.filter((n) => n === "AbortError").length).toBeGreaterThan(MAX_QUEUE / 2);
    expect(names.every((n) => ["done", "AbortError", "ServiceUnavailableError"].includes(n))).toBe(true);
  });

  it("runs again after the abort: the pool is not left broken", async () => {
    const pdf = await renderSwapPdfOffThread(swap);
    expect(pdf.subarray(0, 5).toString("latin1")).toBe("%PDF-");
  });
});
