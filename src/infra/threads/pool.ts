/**
 * The worker pool (piscina): CPU-heavy pure functions run in worker threads, off the main event
 * loop: PDF rendering (pdfkit's layout is synchronous CPU work, hundreds of milliseconds for a long
 * invoice on a busy machine, docs/limits.md "PDFs off the event loop") and the signing of tax
 * documents (SII: RSA signatures of a few milliseconds per DTE, hundreds per billing run batch).
 * The tasks are infra/threads/tasks.ts.
 *
 * - Threads: at most `THREADS` (the machine's available parallelism, at least 1, at most 8),
 *   started on first use, none kept while idle: a thread idle for `IDLE_TIMEOUT_MS` ends, and an
 *   idle thread never keeps the process alive.
 * - Queue limit: at most `MAX_QUEUE` tasks wait for a thread; one more is refused with
 *   ServiceUnavailableError (503 `service_unavailable`, Retry-After 5 s), nothing done.
 * - Cancellation: a task given an AbortSignal that aborts before it finishes is taken out of the
 *   queue (or, if running, its thread is stopped and replaced) and rejects with piscina's
 *   AbortError.
 * - A thread that dies is replaced; the tasks it had reject with an Error.
 *
 * From TypeScript sources (tsx, vitest) a thread loads tasks.source.mjs, which registers tsx's
 * loader and loads tasks.ts; from the build (dist/) it loads tasks.js.
 */
import { availableParallelism } from "node:os";
import { Piscina } from "piscina";
import { InvalidStateError, ServiceUnavailableError, ValidationError } from "../../domain/errors.js";
import type { PdfDocumentData } from "../pdf.js";
import type { SwapPdfData } from "../swap-pdf.js";
import type { tasks, TaskOutcome, ThreadError } from "./tasks.js";

/** Threads at most: the machine's available parallelism, at least 1, at most 8. */
export const THREADS = Math.max(1, Math.min(8, availableParallelism()));

/** A thread idle this long (ms) ends; the next task starts one again. */
export const IDLE_TIMEOUT_MS = 60_000;

/** Tasks that may wait for a thread at once; one more is refused (ServiceUnavailableError). */
export const MAX_QUEUE = 256;

type Tasks = typeof tasks;
type TaskName = keyof Tasks;
type Input<K extends TaskName> = Parameters<Tasks[K]>[0];
type Output<K extends TaskName> = Awaited<ReturnType<Tasks[K]>> extends TaskOutcome<infer R> ? R : never;

let pool: Piscina | null = null;

function threadPool(): Piscina {
  if (pool) return pool;
  const fromSource = import.meta.url.endsWith(".ts");
  pool = new Piscina({
    filename: new URL(fromSource ? "./tasks.source.mjs" : "./tasks.js", import.meta.url).href,
    minThreads: 0,
    maxThreads: THREADS,
    idleTimeout: IDLE_TIMEOUT_MS,
    maxQueue: MAX_QUEUE,
  });
  // a thread that fails while it has no task: nothing waits on it (its tasks reject with the
  // error), and piscina starts another on the next task; without a listener the error would end
  // the process
  pool.on("error", () => {});
  return pool;
}

/** Rebuilds the error a task threw: ValidationError and InvalidStateError with their fields. */
function rebuild(error: ThreadError): Error {
  if (error.name === "ValidationError") return new ValidationError(error.message, error.fields ?? {});
  if (error.name === "InvalidStateError") return new InvalidStateError(error.message, error.fields);
  const e = new Error(error.message);
  e.name = error.name;
  return e;
}

function queueFull(): ServiceUnavailableError {
  return new ServiceUnavailableError(
    `The service's worker threads are busy (${MAX_QUEUE} tasks waiting); nothing was changed. Retry later.`,
  );
}

/** What `runInThread` takes besides the input. */
export interface RunOptions {
  /** Cancels the task: out of the queue, or its thread stopped; the promise rejects (AbortError). */
  signal?: AbortSignal;
}

/**
 * Runs task `name` of infra/threads/tasks.ts on `input` in a thread of the pool. Resolves with its
 * result; rejects with what the task threw (ValidationError and InvalidStateError with their
 * fields, else an Error of the same name and message), ServiceUnavailableError when `MAX_QUEUE`
 * tasks already wait, an AbortError when `signal` aborts, or an Error when the thread dies.
 */
export async function runInThread<K extends TaskName>(
  name: K,
  input: Input<K>,
  options: RunOptions = {},
): Promise<Output<K>> {
  const threads = threadPool();
  // piscina's own maxQueue does not count tasks given a signal (5.3: they wait in another queue),
  // so the limit is checked here too, on piscina's count of every waiting task
  if (threads.queueSize >= MAX_QUEUE) throw queueFull();
  let outcome: TaskOutcome<Output<K>>;
  try {
    outcome = await threads.run(input, { name, signal: options.signal ?? null });
  } catch (e) {
    if (e instanceof Error && e.message === "Task queue is at limit") throw queueFull();
    throw e;
  }
  if (outcome.error) throw rebuild(outcome.error);
  return outcome.result;
}

/** Stops every thread (tasks in flight reject); the next task starts the pool again. */
export async function closeThreads(): Promise<void> {
  const stopping = pool;
  pool = null;
  await stopping?.destroy();
}

/** A PDF's bytes as they come back from a thread, as a Buffer over the same memory. */
async function pdfBuffer(rendering: Promise<Uint8Array>): Promise<Buffer> {
  let bytes: Uint8Array;
  try {
    bytes = await rendering;
  } catch (e) {
    if (e instanceof ServiceUnavailableError || (e instanceof Error && e.name === "AbortError")) throw e;
    throw new Error(`PDF rendering failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** infra/pdf.ts `renderDocumentPdf`, in a thread of the pool. */
export function renderDocumentPdfOffThread(data: PdfDocumentData, options: RunOptions = {}): Promise<Buffer> {
  return pdfBuffer(runInThread("renderDocumentPdf", data, options));
}

/** infra/swap-pdf.ts `renderSwapPdf`, in a thread of the pool. */
export function renderSwapPdfOffThread(data: SwapPdfData, options: RunOptions = {}): Promise<Buffer> {
  return pdfBuffer(runInThread("renderSwapPdf", data, options));
}
