/**
 * `npx tsx bench/profile-summary.ts <file.cpuprofile> [--top N] [--requests N]` (docs/performance.md):
 * the self time of a V8 CPU profile (`node --cpu-prof`, as `BENCH_PROFILE=<dir> npm run bench:http`
 * writes) grouped by where the code lives, and the top self-time functions, as Markdown tables.
 *
 * Groups: `node_modules/<package>` (scoped packages as `@scope/name`), `node internals`
 * (`node:` modules), `ours: <dir>` (this repository's code outside node_modules, by its first two
 * path segments, e.g. `dist/rest`; the generated Prisma client is `dist/infra`), `(garbage
 * collector)` and `(program)` (V8 and native work not attributed to a JavaScript function). Native
 * frames without a script (V8 builtins such as JSON.parse, C++ bindings such as `writev`) and
 * WebAssembly frames are counted in their nearest JavaScript caller's group, suffixed ` (native)`
 * or ` (wasm)`. Idle time is excluded from the busy total the percentages are of.
 * Groups are also summed into layers (Prisma, pg, GraphQL execution, HTTP layer, ours, Node, GC).
 * With --since-us T (CLOCK_MONOTONIC microseconds, as `process.hrtime.bigint() / 1000n` gives and as
 * bench/http.ts prints for the start of the measured load) only samples from T on count: the
 * start-up (module loading) and the warm-up are left out. With --requests N (the requests served in
 * that window) also prints busy CPU ms per request.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The group of a frame that has a script URL, or null for native/wasm/special frames. */
export function groupOfUrl(url: string): string | null {
  if (!url || url.startsWith("wasm://")) return null;
  if (url.startsWith("node:")) return "node internals";
  const file = url.startsWith("file://") ? fileURLToPath(url) : url;
  const parts = file.split(path.sep);
  const nm = parts.lastIndexOf("node_modules");
  if (nm >= 0) {
    const name = parts[nm + 1]?.startsWith("@") ? `${parts[nm + 1]}/${parts[nm + 2]}` : parts[nm + 1];
    return `node_modules/${name}`;
  }
  if (!path.isAbsolute(file)) return "node internals";
  const rel = path.relative(repoRoot, file);
  if (rel.startsWith("..")) return `other: ${file}`;
  return `ours: ${rel.split(path.sep).slice(0, 2).join("/")}`;
}

export interface Summary {
  totalMs: number;
  idleMs: number;
  busyMs: number;
  groups: { group: string; ms: number }[];
  layers: { layer: string; ms: number }[];
  functions: { name: string; group: string; where: string; ms: number }[];
}

/** The layer of a group (the first matching prefix), for the rollup the issue compares. */
const LAYERS: [string, RegExp][] = [
  [
    "Prisma (client runtime, Wasm query compiler, driver adapter)",
    /^node_modules\/(@prisma\/|prisma|pglite-prisma-adapter)/,
  ],
  ["pg (driver, pool, protocol)", /^node_modules\/pg(-|$|\s)/],
  [
    "GraphQL execution (graphql-js, graphql-tools, envelop, Pothos, armor)",
    /^node_modules\/(graphql(?= |$)|@graphql-tools\/|@envelop\/|@pothos\/|@escape\.tech\/|graphql-scalars)/,
  ],
  ["HTTP layer (Yoga, whatwg-node)", /^node_modules\/(graphql-yoga|@graphql-yoga\/|@whatwg-node\/)/],
  ["ours (dist/)", /^ours: /],
  ["garbage collection", /^\(garbage collector\)/],
  ["Node internals and native (incl. socket writes)", /^(node internals|\(program\))/],
];
export function layerOf(group: string): string {
  return LAYERS.find(([, re]) => re.test(group))?.[0] ?? "other packages";
}

export function summarize(profile: CpuProfile, sinceUs = 0): Summary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const groupCache = new Map<number, string>();
  const groupOf = (id: number): string => {
    const cached = groupCache.get(id);
    if (cached) return cached;
    const node = byId.get(id)!;
    const { functionName, url } = node.callFrame;
    let group: string;
    if (
      functionName === "(garbage collector)" ||
      functionName === "(program)" ||
      functionName === "(idle)" ||
      functionName === "(root)"
    )
      group = functionName;
    else {
      const own = groupOfUrl(url);
      if (own) group = own;
      else {
        let up = parent.get(id);
        let found: string | null = null;
        while (up !== undefined && !found) {
          const f = byId.get(up)!.callFrame;
          found = groupOfUrl(f.url);
          up = parent.get(up);
        }
        group = `${found ?? "node internals"} (${url.startsWith("wasm://") ? "wasm" : "native"})`;
      }
    }
    groupCache.set(id, group);
    return group;
  };
  // sample i lasts until sample i+1 (timeDeltas[i+1]); the last one gets the mean interval
  const selfUs = new Map<number, number>();
  const n = profile.samples.length;
  const meanUs = n > 1 ? (profile.endTime - profile.startTime) / n : 0;
  let at = profile.startTime;
  for (let i = 0; i < n; i++) {
    at += profile.timeDeltas[i];
    const dt = i + 1 < n ? profile.timeDeltas[i + 1] : meanUs;
    if (at < sinceUs) continue;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + Math.max(0, dt));
  }
  const groups = new Map<string, number>();
  const functions = new Map<string, { name: string; group: string; where: string; ms: number }>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    totalUs += us;
    const group = groupOf(id);
    if (group === "(idle)") {
      idleUs += us;
      continue;
    }
    groups.set(group, (groups.get(group) ?? 0) + us);
    const f = byId.get(id)!.callFrame;
    const file = f.url.startsWith("file://") ? path.relative(repoRoot, fileURLToPath(f.url)) : f.url;
    const where = f.url ? `${file.replace(/^(\.\.\/)*.*node_modules\//, "")}:${f.lineNumber + 1}` : "";
    const key = `${f.functionName}|${where}|${group}`;
    const entry = functions.get(key) ?? { name: f.functionName || "(anonymous)", group, where, ms: 0 };
    entry.ms += us / 1000;
    functions.set(key, entry);
  }
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    busyMs: (totalUs - idleUs) / 1000,
    groups: [...groups].map(([group, us]) => ({ group, ms: us / 1000 })).sort((a, b) => b.ms - a.ms),
    layers: [
      ...[...groups].reduce(
        (m, [group, us]) => m.set(layerOf(group), (m.get(layerOf(group)) ?? 0) + us),
        new Map<string, number>(),
      ),
    ]
      .map(([layer, us]) => ({ layer, ms: us / 1000 }))
      .sort((a, b) => b.ms - a.ms),
    functions: [...functions.values()].sort((a, b) => b.ms - a.ms),
  };
}

function main(): void {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const value = args[i + 1];
    args.splice(i, 2);
    return value;
  };
  const top = Number(option("--top") ?? 25);
  const requests = option("--requests");
  const sinceUs = Number(option("--since-us") ?? 0);
  if (!args.length) {
    console.error(
      "usage: npx tsx bench/profile-summary.ts <file.cpuprofile>... [--top N] [--since-us T] [--requests N]",
    );
    process.exit(2);
  }
  for (const file of args) {
    const s = summarize(JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile, sinceUs);
    const pct = (ms: number) => `${((100 * ms) / s.busyMs).toFixed(1)} %`;
    console.log(
      `${file}: ${(s.totalMs / 1000).toFixed(1)} s profiled${sinceUs ? " (from --since-us)" : ""}` +
        `, ${(s.idleMs / 1000).toFixed(1)} s idle, ${(s.busyMs / 1000).toFixed(1)} s busy`,
    );
    if (requests)
      console.log(`busy CPU per request: ${(s.busyMs / Number(requests)).toFixed(2)} ms (${requests} requests)`);
    console.log("\n| layer | self ms | % of busy |\n|---|---|---|");
    for (const l of s.layers) console.log(`| ${l.layer} | ${l.ms.toFixed(0)} | ${pct(l.ms)} |`);
    console.log("\n| group | self ms | % of busy |\n|---|---|---|");
    for (const g of s.groups) console.log(`| ${g.group} | ${g.ms.toFixed(0)} | ${pct(g.ms)} |`);
    console.log(`\n| function | group | where | self ms | % of busy |\n|---|---|---|---|---|`);
    for (const f of s.functions.slice(0, top))
      console.log(
        `| \`${f.name}\` | ${f.group} | ${f.where ? `\`${f.where}\`` : ""} | ${f.ms.toFixed(0)} | ${pct(f.ms)} |`,
      );
    console.log();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
