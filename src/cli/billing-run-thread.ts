/**
 * The billing run's thread (started by cli/billing-run.ts `startBillingRunThread` with a bounded
 * old generation, docs/performance.md "Billing run memory"): opens the configured database
 * (cli/open.ts: migrated) and the settings, posts `{ ready: true }`, then runs the billing run once
 * with the options of the first message it gets. After each batch it posts `{ progress: [done,
 * total] }`; at the end `{ summary, heap }` (`heap`: this thread's heap limit and its peaks of
 * process.memoryUsage(), sampled every 100 ms) or `{ error }`. It closes the database before the last message, and then
 * ends (nothing keeps it alive).
 */
import { getHeapStatistics } from "node:v8";
import { parentPort } from "node:worker_threads";
import { runBilling } from "../services/billing-run.js";
import { installEventPrinting, openDatabase, settings } from "./open.js";
import type { ThreadRunOptions, ThreadMessage } from "./billing-run.js";

const port = parentPort!;
const post = (message: ThreadMessage) => port.postMessage(message);

/** The error as the starting thread rebuilds it: name, message (with infra's wording), stack and a string code. */
async function serialized(e: unknown): Promise<ThreadMessage> {
  const { errorMessage } = await import("../infra/driver-adapter.js");
  const error = e as Error & { code?: unknown };
  return {
    error: {
      name: error?.name ?? "Error",
      message: errorMessage(e),
      stack: error?.stack,
      code: typeof error?.code === "string" ? error.code : undefined,
    },
  };
}

try {
  const [{ settings: runSettings }, database] = await Promise.all([settings(), openDatabase(), installEventPrinting()]);
  port.once("message", (options: ThreadRunOptions) => {
    const peak = {
      heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
      heapUsedMb: 0,
      heapTotalMb: 0,
      externalMb: 0,
    };
    const sample = () => {
      const m = process.memoryUsage();
      peak.heapUsedMb = Math.max(peak.heapUsedMb, Math.round(m.heapUsed / 2 ** 20));
      peak.heapTotalMb = Math.max(peak.heapTotalMb, Math.round(m.heapTotal / 2 ** 20));
      peak.externalMb = Math.max(peak.externalMb, Math.round(m.external / 2 ** 20));
    };
    const sampler = setInterval(sample, 100);
    runBilling({
      prisma: database.prisma,
      settings: runSettings,
      until: options.until,
      batchSize: options.batchSize,
      workers: options.workers,
      onProgress: (done, total) => post({ progress: [done, total] }),
    })
      .then(
        async (summary) => {
          clearInterval(sampler);
          sample();
          await database.close();
          post({ summary, heap: peak });
        },
        async (e: unknown) => {
          clearInterval(sampler);
          await database.close().catch(() => undefined);
          post(await serialized(e));
        },
      )
      .catch(async (e: unknown) => post(await serialized(e)));
  });
  post({ ready: true });
} catch (e) {
  post(await serialized(e));
}
