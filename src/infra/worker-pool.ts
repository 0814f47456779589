/**
 * A small pool of long-lived worker threads for CPU-heavy pure functions (the pattern of
 * infra/pdf-pool.ts, with several threads): each thread runs one module that answers
 * `{ id, job }` with `{ id, result }` or `{ id, error }`. Threads are started on first use, do not
 * keep the process alive while idle, and a thread that dies is replaced (the jobs it had fail with
 * an Error). Jobs go to the thread with the fewest jobs waiting.
 *
 * From TypeScript sources (tsx, vitest) a thread loads its `.ts` module through tsx's loader; from
 * the build (dist/) it loads the `.js` module.
 */
import { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";

/** An error as a thread sends it back: the name, message and (for DomainErrors) field errors. */
export interface ThreadError {
  name: string;
  message: string;
  fields?: Record<string, string[]>;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

interface Slot {
  worker: Worker | null;
  pending: Map<number, Pending>;
}

/**
 * The worker pool of thread module `moduleUrl` (an absolute `file:` URL ending in `.ts` under
 * sources, `.js` in the build: pass `new URL("./x-thread.ts" or ".js", import.meta.url)`).
 * `size`: threads, default the machine's available parallelism (at least 1, at most 8).
 * `rebuildError` turns a ThreadError back into the error the caller throws.
 */
export class WorkerPool<Job, Result> {
  private readonly slots: Slot[];
  private nextId = 1;

  constructor(
    private readonly moduleUrl: URL,
    private readonly rebuildError: (error: ThreadError) => Error,
    size = Math.max(1, Math.min(8, availableParallelism())),
  ) {
    this.slots = Array.from({ length: size }, () => ({ worker: null, pending: new Map() }));
  }

  /** Threads in the pool. */
  get size(): number {
    return this.slots.length;
  }

  private thread(slot: Slot): Worker {
    if (slot.worker) return slot.worker;
    const url = this.moduleUrl;
    const fromSource = url.pathname.endsWith(".ts");
    // from sources the thread first registers tsx's loader (a devDependency, there whenever sources run)
    const started = fromSource
      ? new Worker(
          `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`,
          { eval: true },
        )
      : new Worker(url);
    started.unref();
    started.on("message", (message: { id: number; result?: unknown; error?: ThreadError }) => {
      const job = slot.pending.get(message.id);
      if (!job) return;
      slot.pending.delete(message.id);
      if (message.error) job.reject(this.rebuildError(message.error));
      else job.resolve(message.result);
    });
    const fail = (error: Error) => {
      if (slot.worker === started) slot.worker = null;
      for (const job of slot.pending.values()) job.reject(error);
      slot.pending.clear();
    };
    started.on("error", fail);
    started.on("exit", (code) => fail(new Error(`a worker thread stopped (exit code ${code})`)));
    slot.worker = started;
    return started;
  }

  /** Runs `job` in the least busy thread; `transfer`: ArrayBuffers moved, not copied. */
  run(job: Job, transfer: ArrayBuffer[] = []): Promise<Result> {
    const slot = this.slots.reduce((best, s) => (s.pending.size < best.pending.size ? s : best));
    const id = this.nextId++;
    return new Promise<Result>((resolve, reject) => {
      slot.pending.set(id, { resolve: resolve as (r: unknown) => void, reject });
      const w = this.thread(slot);
      // while a job waits the thread keeps the process alive, so the answer is not lost
      w.ref();
      w.postMessage({ id, job }, transfer);
    }).finally(() => {
      if (slot.pending.size === 0) slot.worker?.unref();
    });
  }

  /** Stops every thread (jobs in flight fail); the next run starts them again. */
  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker?.terminate()));
  }
}

/** What a thread sends back for a thrown value. */
export function threadError(e: unknown): ThreadError {
  if (e instanceof Error) {
    const fields = (e as { fields?: Record<string, string[]> }).fields;
    return { name: e.name, message: e.message, ...(fields ? { fields } : {}) };
  }
  return { name: "Error", message: String(e) };
}
