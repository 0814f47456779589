/**
 * Command line: `npm run --silent cli -- <command>` (`node dist/cli.js <command>`).
 *   api-key create --organization "Acme SpA" --email ops@acme.cl --mode test [--expires yyyy-mm-dd]
 *       prints {"organization":"org_...","id":"key_...","key":"sk_test_...","expires_at":null} as its last line,
 *       and on stderr the organization and the database it wrote to
 *   api-key list [--organization <name or id>] [--json]     api-key revoke <key id>   (src/cli/api-keys.ts)
 *   migrate [deploy]   applies pending migrations;  migrate status   lists applied and pending ones
 *   db copy --to <postgresql url>   copies the configured (embedded) database into an empty
 *       PostgreSQL database, migrated first (docs/moving-to-postgresql.md; src/cli/database.ts)
 *   billing run [--until yyyy-mm-dd] [--json] [--batch-size n] [--workers n]
 *       bills every due subscription (docs/billing-run.md); progress bar on stderr, summary on stdout
 *   sii send    uploads the queued DTEs to SII and polls sent envelopes once (docs/sii-sending.md);
 *               prints the round's report as JSON
 * The commands are in src/cli/program.ts. Where they run: on PostgreSQL, and on an embedded database
 * no live process holds, in this process (src/cli/local.ts); on an embedded database a running
 * server holds (its lock, infra/data-dir-lock.ts, names a live owner), inside that server through its
 * control socket `<BILLING_DATA_DIR>/control.sock` (src/cli/remote.ts, src/cli/serve.ts;
 * docs/operations.md "The command line beside a running server").
 *
 * Only commander and Node's own modules load up front; each command imports what it needs, so
 * `--help` and `--version` answer at once.
 */
import fs from "node:fs";
import { databaseTarget, dataDirOf } from "./infra/database-target.js";
import { liveOwner } from "./infra/data-dir-lock.js";
import { controlSocketPath } from "./infra/control-socket.js";
import type { HeldDataDir } from "./cli/remote.js";

const { version } = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string;
};
const argv = process.argv.slice(2);

/** Help and version are answered here, whoever holds the database. */
function asksForHelp(args: string[]): boolean {
  return args.length === 0 || args.some((a) => ["-h", "--help", "-V", "--version", "help"].includes(a));
}

/** The embedded database's data directory when a live process (not this one) holds it; else null. */
function heldDataDir(): HeldDataDir | null {
  const target = databaseTarget();
  const dataDir = dataDirOf(target);
  if (!dataDir || target.kind !== "pglite" || !target.dir) return null;
  const owner = liveOwner(target.dir);
  if (!owner || owner.pid === process.pid) return null;
  return { dir: target.dir, owner, socket: controlSocketPath(dataDir) };
}

const held = asksForHelp(argv) ? null : heldDataDir();
if (held) {
  const { runThroughServer } = await import("./cli/remote.js");
  // not process.exit: stdout may still be flushing to a pipe
  process.exitCode = await runThroughServer(held, argv, version);
} else {
  const [{ buildProgram, commandFailure }, { localContext }] = await Promise.all([
    import("./cli/program.js"),
    import("./cli/local.js"),
  ]);
  let code = 0;
  try {
    await buildProgram(
      localContext((c) => (code = c)),
      version,
    ).parseAsync(process.argv);
    process.exitCode = code;
  } catch (e) {
    const failure = await commandFailure(e);
    process.stderr.write(failure.text);
    process.exit(failure.code);
  }
}
