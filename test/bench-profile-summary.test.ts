/**
 * bench/profile-summary.ts (docs/performance.md): self time of a CPU profile grouped by package,
 * on a small hand-written profile (no figure of a real run enters a test).
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { groupOfUrl, layerOf, summarize, type CpuProfile } from "../bench/profile-summary.js";

const root = path.resolve(import.meta.dirname, "..");
const file = (rel: string) => pathToFileURL(path.join(root, rel)).href;

describe("profile summary", () => {
  it("groups a script by package, node internals or our directory", () => {
    expect(groupOfUrl(file("node_modules/@prisma/client/runtime/client.js"))).toBe("node_modules/@prisma/client");
    expect(groupOfUrl(file("node_modules/graphql/execution/execute.js"))).toBe("node_modules/graphql");
    expect(groupOfUrl(file("node_modules/a/node_modules/pg/lib/client.js"))).toBe("node_modules/pg");
    expect(groupOfUrl("node:internal/stream_base_commons")).toBe("node internals");
    expect(groupOfUrl(file("dist/rest/router.js"))).toBe("ours: dist/rest");
    expect(groupOfUrl("")).toBeNull();
    expect(groupOfUrl("wasm://wasm/00a1b2c3")).toBeNull();
  });

  it("sums groups into layers", () => {
    expect(layerOf("node_modules/@prisma/client (wasm)")).toBe(
      "Prisma (client runtime, Wasm query compiler, driver adapter)",
    );
    expect(layerOf("node_modules/pg-protocol")).toBe("pg (driver, pool, protocol)");
    expect(layerOf("node_modules/pg")).toBe("pg (driver, pool, protocol)");
    expect(layerOf("node_modules/pino")).toBe("other packages");
    expect(layerOf("node_modules/@pothos/core")).toBe(
      "GraphQL execution (graphql-js, graphql-tools, envelop, Pothos, armor)",
    );
    expect(layerOf("node_modules/graphql-yoga")).toBe("HTTP layer (Yoga, whatwg-node)");
    expect(layerOf("ours: dist/rest (native)")).toBe("ours (dist/)");
    expect(layerOf("node internals (native)")).toBe("Node internals and native (incl. socket writes)");
  });

  it("sums self time per node, excludes idle, and gives native and wasm frames their caller's group", () => {
    const frame = (functionName: string, url = "") => ({ functionName, url, lineNumber: 9, columnNumber: 0 });
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame("(root)"), children: [2, 3, 4, 5] },
        { id: 2, callFrame: frame("(idle)") },
        { id: 3, callFrame: frame("(garbage collector)") },
        {
          id: 4,
          callFrame: frame("compile", file("node_modules/@prisma/client/runtime/query_compiler_bg.postgresql.mjs")),
          children: [6],
        },
        { id: 5, callFrame: frame("handle", file("dist/rest/router.js")), children: [7] },
        { id: 6, callFrame: frame("wasm-function[42]", "wasm://wasm/00a1b2c3") },
        { id: 7, callFrame: frame("writev") },
      ],
      startTime: 0,
      endTime: 7000,
      // each sample lasts until the next one: 1 ms each, the last gets the mean (7000 / 7 us)
      samples: [2, 2, 3, 4, 6, 6, 7],
      timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000],
    };
    const s = summarize(profile);
    expect(s.idleMs).toBe(2);
    expect(s.busyMs).toBe(5);
    expect(s.groups).toEqual([
      { group: "node_modules/@prisma/client (wasm)", ms: 2 },
      { group: "(garbage collector)", ms: 1 },
      { group: "node_modules/@prisma/client", ms: 1 },
      { group: "ours: dist/rest (native)", ms: 1 },
    ]);
    expect(s.layers[0]).toEqual({ layer: "Prisma (client runtime, Wasm query compiler, driver adapter)", ms: 3 });
    // from the 4th sample on (the profile's clock: startTime + the deltas): 4 ms, none idle
    const late = summarize(profile, 3000);
    expect([late.idleMs, late.busyMs]).toEqual([0, 4]);
    expect(s.functions[0]).toEqual({
      name: "wasm-function[42]",
      group: "node_modules/@prisma/client (wasm)",
      where: "wasm://wasm/00a1b2c3:10",
      ms: 2,
    });
    expect(s.functions.find((f) => f.name === "compile")).toEqual({
      name: "compile",
      group: "node_modules/@prisma/client",
      where: "@prisma/client/runtime/query_compiler_bg.postgresql.mjs:10",
      ms: 1,
    });
  });
});
