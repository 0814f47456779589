/**
 * Command line: `npm run --silent cli -- <command>` (`node dist/cli.js <command>`).
 *   api-key create --organization "Acme SpA" --email ops@acme.cl --mode test [--expires yyyy-mm-dd]
 *       prints {"organization":"org_...","id":"key_...","key":"sk_test_...","expires_at":null} as its last line,
 *       and on stderr the organization and the database it wrote to
 *   api-key list [--organization <name or id>] [--json]     api-key revoke <key id>   (src/cli/api-keys.ts)
 *   member invite --organization <name or id> --email ana@acme.cl --role admin|finance|viewer [--name <name>]
 *       prints the one-time dashboard invitation link (docs/dashboard.md; src/cli/members.ts)
 *   migrate [deploy]   applies pending migrations;  migrate status   lists applied and pending ones
 *   db copy --to <postgresql url>   copies the configured (embedded) database into an empty
 *       PostgreSQL database, migrated first (docs/moving-to-postgresql.md; src/cli/database.ts)
 *   billing run [--until yyyy-mm-dd] [--json] [--batch-size n] [--workers n]
 *       bills every due subscription (docs/billing-run.md); progress bar on stderr, summary on stdout
 *   sii send    uploads the queued DTEs to SII and polls sent envelopes once (docs/sii-sending.md);
 *               prints the round's report as JSON
 *   events listen --api-key sk_test_... [--url http://localhost:3000] [--events a.b,c.d] [--forward-to <url>]
 *       prints each event of the key's organization and mode as it commits, one JSON line each, and forwards it
 *       signed to a local URL (docs/webhooks.md "Local development: events listen"; src/cli/events.ts). It talks
 *       to the running server over HTTP, never to the database, so it always runs in this process.
 * The commands are in src/cli/program.ts. Where they run (src/cli/run.ts): on PostgreSQL, and on an
 * embedded database no live process holds, in this process (src/cli/local.ts); on an embedded
 * database a running server holds (its lock, infra/data-dir-lock.ts, names a live owner), inside
 * that server through its control socket `<BILLING_DATA_DIR>/control.sock` (src/cli/remote.ts,
 * src/cli/serve.ts; docs/operations.md "The command line beside a running server").
 *
 * Only commander and Node's own modules load up front; each command imports what it needs, so
 * `--help` and `--version` answer at once.
 */
import fs from "node:fs";
import { runCommand } from "./cli/run.js";

const { version } = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string;
};
const code = await runCommand(process.argv.slice(2), version);
// a failure ends at once (whatever a failed command left open); a success lets stdout drain and exits by itself
if (code !== 0) process.exit(code);
