/**
 * A new organization with a test API key, for the programs that try the service on a running
 * server (the demo, the quickstart): created as `api-key create` creates them (cli/run.ts), through
 * the running server's control socket when it holds the embedded database configured here, or in
 * PostgreSQL with DATABASE_URL, and then checked against the server at `url` (a key it refuses was
 * written into a database that server does not use).
 */
import fs from "node:fs";
import { databaseTarget, describeDatabase } from "../infra/database-target.js";
import { heldDataDir, runCommand } from "./run.js";

/** Why the program cannot go on where it was pointed; nothing was changed (its message says what to do). */
export class TryStop extends Error {}

/** The package version (a running server refuses a command line of another version). */
export function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string })
    .version;
}

/** `yyyy-mm-dd hh:mm:ss` in local time: a new organization's name tells when it was made. */
export function stamp(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return (
    `${now.getFullYear()}-${p(now.getMonth() + 1)}-${p(now.getDate())} ` +
    `${p(now.getHours())}:${p(now.getMinutes())}:${p(now.getSeconds())}`
  );
}

/** POSTs a GraphQL query with `key`; resolves to the HTTP status and the parsed answer. */
export async function graphqlAs<T>(url: string, key: string, query: string) {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, body: (await res.json()) as { data?: T; errors?: { message: string }[] } };
}

/** What `createTestOrganization` made. */
export interface TestOrganization {
  organization: string;
  /** `key_` id of the key (for `api-key revoke`) */
  keyId: string;
  /** the key itself, `sk_test_...` */
  key: string;
  /** the database it was written to, in words */
  database: string;
}

/**
 * Creates the organization `name` with a test key for `email`, where the command line runs
 * `api-key create` (module comment), and checks the server at `url` accepts the key. Throws TryStop
 * (nothing changed, or only the key to revoke, named) when the configured embedded database is held
 * by no running server, when `api-key create` fails (its lines went to stderr) or when the server
 * refuses the key. `program` names the caller in messages ("the demo").
 */
export async function createTestOrganization(
  url: string,
  name: string,
  email: string,
  program: string,
): Promise<TestOrganization> {
  const target = databaseTarget();
  const database = describeDatabase(target);
  if (target.kind === "pglite" && !heldDataDir())
    throw new TryStop(
      `no running server holds ${database}, where ${program} would create its organization. Start the server ` +
        "first (npm start), and run this in the same directory (or with the server's BILLING_DATA_DIR or " +
        "DATABASE_URL)",
    );
  let printed = "";
  const code = await runCommand(
    ["api-key", "create", "--organization", name, "--email", email, "--mode", "test"],
    packageVersion(),
    {
      out: { write: (text) => (printed += text) },
      notes: process.stderr,
    },
  );
  if (code !== 0) throw new TryStop(`${program} could not create its organization (the lines above say why)`);
  const created = JSON.parse(printed.trim().split("\n").at(-1)!) as { organization: string; id: string; key: string };
  const check = await graphqlAs(url, created.key, "{ taxProfile { organization } }");
  if (check.status === 401)
    throw new TryStop(
      `the server at ${url} does not accept the key ${program} created in ${database} (401): it does not use ` +
        "that database. Run it with the server's BILLING_DATA_DIR or DATABASE_URL. (Revoke the key it created: " +
        `npm run --silent cli -- api-key revoke ${created.id})`,
    );
  return { organization: created.organization, keyId: created.id, key: created.key, database };
}
