/**
 * PDFs render in a worker thread (docs/limits.md "PDFs off the event loop"): pdfkit's layout is
 * synchronous CPU work (hundreds of milliseconds for a long invoice on a busy machine), which on
 * the main thread would hold every other request, /healthz included. One long-lived thread
 * (infra/pdf-thread.ts) renders the jobs in order; it is started at the first PDF, does not keep
 * the process alive, and is started again if it dies (the jobs it had fail with an Error).
 *
 * From TypeScript sources (tsx, vitest) the thread loads pdf-thread.ts through tsx's loader; from
 * the build (dist/) it loads pdf-thread.js.
 */
import { Worker } from "node:worker_threads";
import type { PdfDocumentData } from "./pdf.js";
import type { SwapPdfData } from "./swap-pdf.js";

interface Pending {
  resolve(pdf: Buffer): void;
  reject(error: Error): void;
}

let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, Pending>();

function thread(): Worker {
  if (worker) return worker;
  const fromSource = import.meta.url.endsWith(".ts");
  const url = new URL(fromSource ? "./pdf-thread.ts" : "./pdf-thread.js", import.meta.url);
  // from sources the thread first registers tsx's loader (a devDependency, there whenever sources run)
  const started = fromSource
    ? new Worker(
        `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`,
        { eval: true },
      )
    : new Worker(url);
  started.unref();
  started.on("message", (message: { id: number; pdf?: Uint8Array; error?: string }) => {
    const job = pending.get(message.id);
    if (!job) return;
    pending.delete(message.id);
    if (message.pdf) job.resolve(Buffer.from(message.pdf.buffer, message.pdf.byteOffset, message.pdf.byteLength));
    else job.reject(new Error(`PDF rendering failed: ${message.error}`));
  });
  const fail = (error: Error) => {
    if (worker === started) worker = null;
    for (const job of pending.values()) job.reject(error);
    pending.clear();
  };
  started.on("error", fail);
  started.on("exit", (code) => fail(new Error(`the PDF thread stopped (exit code ${code})`)));
  worker = started;
  return started;
}

function render(kind: "document" | "swap", data: unknown): Promise<Buffer> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    const w = thread();
    // while a job waits the thread keeps the process alive, so the answer is not lost
    w.ref();
    w.postMessage({ id, kind, data });
  }).finally(() => {
    if (pending.size === 0) worker?.unref();
  }) as Promise<Buffer>;
}

/** infra/pdf.ts `renderDocumentPdf`, in the PDF thread. */
export function renderDocumentPdfOffThread(data: PdfDocumentData): Promise<Buffer> {
  return render("document", data);
}

/** infra/swap-pdf.ts `renderSwapPdf`, in the PDF thread. */
export function renderSwapPdfOffThread(data: SwapPdfData): Promise<Buffer> {
  return render("swap", data);
}
