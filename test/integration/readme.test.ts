/**
 * The README's commands and docs/tour.md's examples, run as a new user runs them: `npm start` in a
 * folder of its own (a fresh `./data`), `npm run quickstart` beside it, then every `sh` block of
 * the README (but `npm install` and `npm test`) and of the tour (but the demo's, which
 * demo.test.ts runs) in one bash session, in order, so the ids each block sets reach the next.
 * The answers the docs show in `#   ...` comments must come out, in order (`...` stands for any
 * text). The docs say `localhost:3000`; the server here listens on a free port, which replaces it.
 * Embedded database only (the pglite project): the README's default.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_DB } from "../helpers/databases.js";
import { ROOT, runToEnd, serviceEnv, startProcess, type ServiceProcess } from "../helpers/processes.js";
import { generateCaf, generatePkcs12 } from "../helpers/sii-fixtures.js";
import { CONFIG_VARIABLES } from "../../src/infra/config.js";

const README = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
const TOUR = fs.readFileSync(path.join(ROOT, "docs", "tour.md"), "utf8");

/** The `sh` blocks of a Markdown text, in order. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/**
 * The answers a block shows: its comment lines `#   text` (three spaces), each cut at the first run
 * of three or more spaces (what follows explains it). `#   stderr: ...` and its indented
 * continuations tell what goes to stderr and are not checked.
 */
function shownAnswers(block: string): string[] {
  return block
    .split("\n")
    .filter((line) => /^# {3}\S/.test(line) && !line.startsWith("#   stderr:"))
    .map((line) => line.slice(4).split(/ {3,}/)[0].trim());
}

/** True when `line` is `answer` with each `...` standing for any text. */
function matches(line: string, answer: string): boolean {
  const pattern = answer
    .split("...")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${pattern}$`).test(line.trim());
}

/** The answers not found in `output`'s lines in their order (empty: all were). */
function missingAnswers(output: string, answers: string[]): string[] {
  const lines = output.split("\n");
  let at = 0;
  const missing: string[] = [];
  for (const answer of answers) {
    const found = lines.findIndex((line, i) => i >= at && matches(line, answer));
    if (found < 0) missing.push(answer);
    else at = found + 1;
  }
  return missing;
}

/** Runs `script` with bash in `cwd`; resolves with its exit code and output. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv) {
  return runToEnd("bash", ["-c", script], env, cwd);
}

describe.skipIf(TEST_DB !== "pglite")("the README and docs/tour.md, run as written", () => {
  let folder: string;
  let server: ServiceProcess | undefined;
  let url: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    // a folder of the user's own: the project's files linked in, so `npm start` and `./data` are its
    folder = fs.mkdtempSync(path.join(os.tmpdir(), "readme-"));
    for (const name of ["package.json", "node_modules", "scripts", "dist"])
      fs.symlinkSync(path.join(ROOT, name), path.join(folder, name));
    const certificate = generatePkcs12({ rut: "12.345.678-5", password: "clave de prueba" });
    fs.writeFileSync(path.join(folder, "firma.p12"), certificate.file);
    // a CAF authorized yesterday (UTC): it must not be dated after the invoice, which is dated in Chile's time
    // zone, still the previous day for the first 3-4 hours of a UTC day (SII: a CAF of type 33 expires six months
    // after its authorization)
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const caf = generateCaf({ rut: "78123456-7", type: 33, from: 1, to: 50, authorizedOn: yesterday });
    fs.writeFileSync(path.join(folder, "caf.xml"), caf.file);
    env = serviceEnv({ PORT: "0", HOST: "127.0.0.1", CERTIFICATE_PASSWORD: certificate.password });
    delete env.BILLING_URL;
    delete env.BILLING_API_KEY;
    server = startProcess("npm", ["start"], env, folder);
    const listening = await server.waitForLog((l) => l.msg === "billing service listening", 90_000);
    url = String(listening.url).replace(/\/$/, "");
  }, 120_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGTERM");
      await server.exited;
    }
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  });

  it("names every configuration variable the service reads", () => {
    for (const variable of CONFIG_VARIABLES) expect(README, variable).toContain(`\`${variable}\``);
  });

  it("is at most 150 lines", () => {
    expect(README.split("\n").length).toBeLessThanOrEqual(151); // the last line ends with a newline
  });

  it("reaches a paid invoice with the quickstart, then by hand, then through the tour", async () => {
    const local = (text: string) =>
      text.replaceAll("http://localhost:3000", url).replaceAll("localhost:3000", url.replace(/^http:\/\//, ""));
    const [install, quickstart, byHand, ...readmeRest] = shellBlocks(README);
    expect(install).toMatch(/^npm install && npm start .*\nnpm test /);
    expect(quickstart.trim()).toMatch(/^npm run quickstart\b/);

    // the quickstart, from nothing to a paid invoice in an organization of its own
    const started = await bash(`${local("npm run quickstart")} -- --json`, folder, { ...env, BILLING_URL: url });
    expect(started.status, started.stderr).toBe(0);
    const made = JSON.parse(started.stdout.trim().split("\n").pop()!);
    expect(made).toMatchObject({ invoice_total: 2916, amount_due: 0, payment_status: "succeeded" });
    expect(made.portal).toMatch(new RegExp(`^${url}/portal/cs_`));
    const portal = await fetch(made.portal, { redirect: "manual" });
    expect([200, 302, 303]).toContain(portal.status);
    // ... and what it prints for a person, with the line the README's next block starts from
    const printed = await bash(local("npm run quickstart"), folder, { ...env, BILLING_URL: url });
    expect(printed.status, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/invoice +inv_\w+ +number 1, total 2916 CLP, finalized, amount due 0/);
    const exportKey = printed.stdout.split("\n").find((line) => line.trim().startsWith("export KEY=sk_test_"));
    expect(exportKey).toBeDefined();

    const blocks = [
      { name: "README: by hand", text: byHand.replace(/^export KEY=sk_test_\.\.\..*$/m, exportKey!.trim()) },
      ...readmeRest.map((text, i) => ({ name: `README: block ${i + 4}`, text })),
      ...shellBlocks(TOUR)
        .filter((text) => !/^npm run demo\b/m.test(text))
        .map((text, i) => ({ name: `tour: block ${i + 1}`, text })),
    ];
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    const marker = (i: number) => `::block ${i}::`;
    const script = [
      "set -eo pipefail",
      ...blocks.flatMap((block, i) => [`echo '${marker(i)}'`, local(block.text)]),
      `echo '${marker(blocks.length)}'`,
    ].join("\n");
    const run = await bash(script, folder, env);
    const outputs = blocks.map((_, i) => {
      const from = run.stdout.indexOf(marker(i));
      const to = run.stdout.indexOf(marker(i + 1));
      return from < 0 ? null : run.stdout.slice(from + marker(i).length, to < 0 ? undefined : to);
    });
    for (const [i, block] of blocks.entries()) {
      expect(outputs[i], `${block.name} did not run; stderr:\n${run.stderr}`).not.toBeNull();
      const missing = missingAnswers(outputs[i]!, shownAnswers(local(block.text)));
      expect(missing, `${block.name} printed:\n${outputs[i]}\nstderr:\n${run.stderr}`).toEqual([]);
    }
    expect(run.status, run.stderr).toBe(0);
  }, 240_000);
});
