/**
 * `billing run` of the command line runs the billing run in a worker thread of its own, whose V8
 * old generation is bounded to BILLING_RUN_OLD_SPACE_MB (docs/performance.md "Billing run
 * memory"). The run keeps nothing per subscription (its live heap stays about 60 MB however many
 * it bills), but each batch's rows live across several database round trips, so they are
 * promoted to the old generation and die there. With the default heap limit of a machine with
 * several GB, V8 lets the old generation grow to about four times the live heap before a full
 * collection, so the peak memory of a long run was about 230 MB of heap more than a short one's.
 * The bound makes V8 use a growing factor of about 1.6 (and collect sooner); 1,024 MB is about
 * 17 times the run's live heap, so the bound itself is never near. Over it, the thread stops with
 * ERR_WORKER_OUT_OF_MEMORY, the batch in progress rolls back, and the command fails.
 *
 * From TypeScript sources (tsx, vitest) the thread loads its `.ts` module through tsx's loader;
 * from the build (dist/) the `.js` module.
 */
import { Worker } from "node:worker_threads";
import type { BillingRunSummary } from "../services/billing-run.js";

/** The old generation of the billing run's thread, in MB (V8's `maxOldGenerationSizeMb`). */
export const BILLING_RUN_OLD_SPACE_MB = 1024;

/** What one run in the thread is given. */
export interface ThreadRunOptions {
  until?: string;
  batchSize?: number;
  workers?: number;
}

/**
 * The thread's peaks of its own V8 heap (used, total) and of memory outside it, and its heap's
 * limit (v8.getHeapStatistics().heap_size_limit: the old generation's bound plus the young one), in MB.
 */
export interface ThreadHeap {
  heapLimitMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
}

/** A message of the thread (cli/billing-run-thread.ts). */
export type ThreadMessage =
  | { ready: true }
  | { progress: [number, number] }
  | { summary: BillingRunSummary; heap: ThreadHeap }
  | { error: { name: string; message: string; stack?: string; code?: string } };

/** A started thread, its database open: `run` runs the billing run once, then the thread ends. */
export interface BillingRunThread {
  run(
    options: ThreadRunOptions,
    onProgress?: (done: number, total: number) => void,
  ): Promise<{ summary: BillingRunSummary; heap: ThreadHeap }>;
}

/** Rebuilds an error the thread sent: same name, message, stack and string code. */
function rebuilt(e: { name: string; message: string; stack?: string; code?: string }): Error {
  const error = new Error(e.message) as Error & { code?: string };
  error.name = e.name;
  if (e.stack) error.stack = e.stack;
  if (e.code !== undefined) error.code = e.code;
  return error;
}

/**
 * Starts the billing run's thread (the configured database and settings, read from `env` as the
 * command line reads them from its environment) and resolves once its database is open.
 */
export function startBillingRunThread(env: NodeJS.ProcessEnv = process.env): Promise<BillingRunThread> {
  const fromSource = import.meta.url.endsWith(".ts");
  const url = new URL(fromSource ? "./billing-run-thread.ts" : "./billing-run-thread.js", import.meta.url);
  const resourceLimits = { maxOldGenerationSizeMb: BILLING_RUN_OLD_SPACE_MB };
  const worker = fromSource
    ? new Worker(
        `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`,
        { eval: true, resourceLimits, env },
      )
    : new Worker(url, { resourceLimits, env });
  let onMessage: (m: ThreadMessage) => void = () => undefined;
  let onFailure: (e: Error) => void = () => undefined;
  let finished = false;
  worker.on("message", (m: ThreadMessage) => onMessage(m));
  worker.on("error", (e) => onFailure(e));
  worker.on("exit", (code) => {
    if (!finished) onFailure(new Error(`the billing run's thread exited with code ${code}`));
  });
  const thread: BillingRunThread = {
    run: (options, onProgress) =>
      new Promise((resolve, reject) => {
        onFailure = reject;
        onMessage = (m) => {
          if ("progress" in m) onProgress?.(...m.progress);
          else if ("summary" in m) {
            finished = true;
            resolve(m);
          } else if ("error" in m) {
            finished = true;
            reject(rebuilt(m.error));
          }
        };
        worker.postMessage(options);
      }),
  };
  return new Promise((resolve, reject) => {
    onFailure = reject;
    onMessage = (m) => {
      if ("ready" in m) resolve(thread);
      else if ("error" in m) {
        finished = true;
        reject(rebuilt(m.error));
      }
    };
  });
}
