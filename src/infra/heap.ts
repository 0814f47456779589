/**
 * How far the service's JavaScript heap may grow past what it holds before V8 collects it
 * (HEAP_GROWING_PERCENT; docs/operations.md "Memory").
 *
 * V8 sets the old generation's next limit at a full collection to the live heap times a factor it
 * picks from the allocation rate, up to 4 on a machine with several GB of memory. A process under
 * sustained work (webhook deliveries, the billing run) then carries up to three times its live
 * heap in garbage: measured, 80 MB live and 450-520 MB of RSS against 250-290 MB idle
 * (docs/performance.md "Memory: V8's headroom, not the backlog"). A fixed factor of 1 + percent/100
 * keeps the RSS near what the process needs, at the cost of more frequent full collections. The
 * default is 50 % (config.ts DEFAULT_HEAP_GROWING_PERCENT): measured, a webhook backlog's peak within
 * 8 % of the idle RSS (25-32 % above it with V8's factor), for 0.05 ms more of garbage collection per
 * POST /v1/invoices/ (docs/operations.md "Memory" has the figures). 0 gives V8's factor back.
 */
import v8 from "node:v8";

/** The V8 flag this module sets. */
export const HEAP_GROWING_FLAG = "--heap-growing-percent";

/**
 * Sets V8's heap growing factor to 1 + `percent`/100 for the rest of the process's life (V8 reads
 * it at every full collection). `percent` 0 leaves V8's own factor. A `--heap-growing-percent`
 * given to node itself (command line or NODE_OPTIONS, in `nodeFlags`) wins: nothing is set then.
 * Returns the percent in force, or null when V8 picks the factor.
 */
export function limitHeapGrowth(percent: number, nodeFlags: string[] = nodeCommandLineFlags()): number | null {
  // node takes V8's flags with `-` or `_`, and their value after `=` or as the next argument
  const at = nodeFlags.findIndex((flag) => flag.replaceAll("_", "-").split("=")[0] === HEAP_GROWING_FLAG);
  if (at >= 0) {
    const [, inline] = nodeFlags[at].split("=");
    const value = Number(inline ?? nodeFlags[at + 1]);
    return Number.isInteger(value) && value > 0 ? value : null;
  }
  if (percent <= 0) return null;
  v8.setFlagsFromString(`${HEAP_GROWING_FLAG}=${percent}`);
  return percent;
}

/** Node's own flags of this process: its command line's and NODE_OPTIONS'. */
function nodeCommandLineFlags(): string[] {
  return [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/).filter(Boolean)];
}
