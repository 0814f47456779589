/**
 * `npm run bench:start`: how fast the built service starts and the CLI answers, as a user runs
 * them (docs/operations.md "Start-up figures"). Needs a current build (`npm run build`).
 *
 * Measures, each as the median of RUNS (default 5) runs, wall time from spawning to the answer:
 * - `npm start` on an embedded database that exists (the second start): until /healthz answers 200;
 *   plus the migration check's own time, from the service's log line;
 * - `npm start` on an empty data directory (the first start: the database is created and migrated), once;
 * - `npm run --silent cli -- --help` and `-- --version`;
 * - the CLI beside a running server on the same embedded database (`api-key list`, answered by the
 *   server through its control socket, docs/operations.md "The command line beside a running server");
 * and, as the floor each is compared with, in the same run: a bare `node` that opens the same
 * PGlite directory and answers HTTP (what any service on this stack pays), and `node -e 0`.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildState, root } from "../scripts/build-state.mjs";

const RUNS = Number(process.env.RUNS ?? 5);

if (buildState() !== "fresh") {
  console.error("dist/ is missing or stale: run `npm run build` first (a start that builds would be measured)");
  process.exit(1);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function waitHealthy(port: number, child: ReturnType<typeof spawn>): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

let nextPort = 31000 + Math.floor(Math.random() * 1000);

/** Spawns `command`, waits for /healthz 200, returns the milliseconds and the output; stops it with SIGTERM. */
async function timeToHealthy(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ ms: number; output: string }> {
  const port = nextPort++;
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: root,
    env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  await waitHealthy(port, child);
  const ms = performance.now() - started;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
  return { ms, output };
}

function timeCommand(command: string, args: string[], env: NodeJS.ProcessEnv): { ms: number; stdout: string } {
  const started = performance.now();
  const r = spawnSync(command, args, { cwd: root, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${r.stderr}`);
  return { ms: performance.now() - started, stdout: r.stdout };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "billing-bench-start-"));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  BILLING_DATA_DIR: dir,
  LOG_LEVEL: "info",
  SII_SEND_INTERVAL_SECONDS: "0",
  NODE_ENV: "production",
};
delete env.DATABASE_URL;

// the floor: node itself, and node opening the same PGlite directory and answering HTTP
const floorScript = `
import http from "node:http";
import { PGlite } from "@electric-sql/pglite";
const db = new PGlite(${JSON.stringify(path.join(dir, "pglite"))});
await db.waitReady;
http.createServer((q, s) => s.end("ok")).listen(Number(process.env.PORT), "127.0.0.1");
process.on("SIGTERM", async () => { await db.close(); process.exit(0); });
`;
const floorFile = path.join(root, "bench", ".floor-start.mjs");

try {
  const first = await timeToHealthy("npm", ["start"], env);
  fs.writeFileSync(floorFile, floorScript);
  const second: number[] = [];
  const migrationCheck: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await timeToHealthy("npm", ["start"], env);
    second.push(run.ms);
    const line = run.output.split("\n").find((l) => l.includes('"database schema up to date"'));
    if (line) migrationCheck.push(JSON.parse(line).ms);
    floor.push((await timeToHealthy(process.execPath, [floorFile], env)).ms);
  }
  // the CLI beside a running server on the same embedded database: answered through its control socket, how fast
  const busy: number[] = [];
  {
    const port = nextPort++;
    const server = spawn("npm", ["start"], {
      cwd: root,
      env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
      stdio: "ignore",
    });
    await waitHealthy(port, server);
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      const r = spawnSync("npm", ["run", "--silent", "cli", "--", "api-key", "list"], {
        cwd: root,
        env,
        encoding: "utf8",
      });
      busy.push(performance.now() - started);
      if (r.status !== 0 || r.stdout !== "no API keys\n")
        throw new Error(`expected the server to answer the CLI: ${r.status} ${r.stdout}${r.stderr}`);
    }
    const exited = new Promise((r) => server.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  }
  const help: number[] = [];
  const version: number[] = [];
  const bareNode: number[] = [];
  let printedVersion = "";
  for (let i = 0; i < RUNS; i++) {
    help.push(timeCommand("npm", ["run", "--silent", "cli", "--", "--help"], env).ms);
    const v = timeCommand("npm", ["run", "--silent", "cli", "--", "--version"], env);
    version.push(v.ms);
    printedVersion = v.stdout.trim();
    bareNode.push(timeCommand(process.execPath, ["-e", "0"], env).ms);
  }
  const row = (name: string, xs: number[], base?: number[]) =>
    `| ${name} | ${Math.round(median(xs))} ms | ${base ? `${(median(xs) / median(base)).toFixed(2)}` : ""} |`;
  console.log(
    `node ${process.version}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}, medians of ${RUNS}`,
  );
  console.log("| what | time | ratio to its floor |");
  console.log("|---|---|---|");
  console.log(
    `| first \`npm start\` (empty data directory: create and migrate), once | ${Math.round(first.ms)} ms | |`,
  );
  console.log(row("second `npm start` to /healthz 200", second, floor));
  console.log(row("  floor: bare node opening the same PGlite directory and answering HTTP", floor));
  console.log(row("migration check with nothing to migrate (in the service)", migrationCheck));
  console.log(row("`npm run --silent cli -- --help`", help, bareNode));
  console.log(row(`\`npm run --silent cli -- --version\` (prints ${printedVersion})`, version, bareNode));
  console.log(
    row("`npm run --silent cli -- api-key list` beside a running server: through its control socket", busy, bareNode),
  );
  console.log(row("  floor: `node -e 0`", bareNode));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(floorFile, { force: true });
}
