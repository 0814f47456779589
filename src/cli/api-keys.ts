/**
 * `api-key` commands of the command line (wired into src/cli.ts):
 *   api-key create --organization <name or org_ id> --email <e-mail> [--mode test|live] [--expires <date>]
 *       prints {"organization":"org_...","organization_name":"...","organization_created":true,"id":"key_...",
 *       "key":"sk_test_...","expires_at":null} as its last line, and on stderr whether it created the
 *       organization or joined an existing one, and which database it wrote to
 *   api-key list [--organization <name or org_ id>] [--json]
 *       prefix, organization, mode, e-mail, created, last used, expires, revoked (never the key)
 *   api-key revoke <key id>      (on stderr: which database)
 * Errors (bad input, unknown id) are thrown as DomainError for the caller to print and exit 1;
 * nothing is written then. The services are imported when a command runs, so building the
 * command tree stays cheap.
 */
import { Command } from "commander";
import type { Database } from "../infra/database.js";
import type { CommandContext } from "./context.js";

export type { CommandOutput } from "./context.js";

/** What the `api-key` commands use of their context (cli/context.ts). */
type ApiKeyContext = Pick<CommandContext, "openDatabase" | "out" | "notes" | "database">;

/** The options of `api-key create` as commander gives them. */
interface CreateOptions {
  organization: string;
  email: string;
  mode: string;
  expires?: string;
}

/**
 * The `api-key` command in context `ctx` (cli/context.ts): each subcommand opens the database once
 * (`ctx.openDatabase`) and closes it when done, also on errors. `ctx.out` receives what the
 * commands print (tests pass a buffer), `ctx.notes` the lines meant for a person (stderr), so `out`
 * stays machine-readable; `ctx.database` names the database in those notes.
 */
export function apiKeyCommands(ctx: ApiKeyContext): Command {
  const command = new Command("api-key").description("manage API keys");
  command
    .command("create")
    .description(
      "create an API key for an organization named by id, or by name (created when no organization has that name; " +
        "says when it joins an existing one)",
    )
    .requiredOption(
      "--organization <name or id>",
      "an organization id (org_...), or a name: the organization with exactly that name, else a new one",
    )
    .requiredOption("--email <email>", "e-mail of the key's user (written as `user` on documents)")
    .option("--mode <mode>", "test or live", "test")
    .option(
      "--expires <date>",
      "the key stops working at 00:00 UTC of this date (yyyy-mm-dd), or at an ISO 8601 timestamp with offset; " +
        "default: never",
    )
    .action((options: CreateOptions) => createKey(ctx, options));

  command
    .command("list")
    .description("list API keys (never the keys themselves)")
    .option("--organization <name or id>", "only this organization (its org_ id or its exact name)")
    .option("--json", "one JSON object per line instead of a table")
    .action((options: { organization?: string; json?: boolean }) => listKeys(ctx, options));

  command
    .command("revoke")
    .description("revoke an API key: it answers 401 from the next request on")
    .argument("<id>", "the key's id (key_..., see api-key list)")
    .action((id: string) => revokeKey(ctx, id));
  return command;
}

/** Runs `run` on `ctx`'s database, opened for it and closed after it (also when it throws); its result. */
async function withDatabase<T>(ctx: ApiKeyContext, run: (database: Database) => Promise<T>): Promise<T> {
  const database = await ctx.openDatabase();
  try {
    return await run(database);
  } finally {
    await database.close();
  }
}

/**
 * `api-key create`: the key as one JSON line on `ctx.out`; on `ctx.notes` whether the organization was created or
 * joined, and the database. A bad --expires throws (DomainError) before the database is opened.
 */
async function createKey(ctx: ApiKeyContext, options: CreateOptions): Promise<void> {
  const { isOrganizationId, parseKeyExpiry } = await import("../domain/api-keys.js");
  const { createApiKey } = await import("../services/api-keys.js");
  const now = new Date();
  // parsed before the database is opened: a bad date writes nothing
  const expiresAt = options.expires === undefined ? null : parseKeyExpiry(options.expires, now);
  const organization = options.organization.trim();
  const target = isOrganizationId(organization)
    ? { organizationId: organization }
    : { organizationName: options.organization };
  const created = await withDatabase(ctx, (database) =>
    createApiKey(database.prisma, { ...target, email: options.email, mode: options.mode, expiresAt }, now),
  );
  const named = `${created.organization} ${JSON.stringify(created.organization_name)}`;
  ctx.notes.write(
    created.organization_created
      ? `created the organization ${named}\n`
      : `joined the existing ` +
          `organization ${named}${
            "organizationName" in target
              ? ` (it has that name; pass ` + `--organization ${created.organization} to name it by id)`
              : ""
          }\n`,
  );
  ctx.notes.write(`wrote the key to ${ctx.database}\n`);
  ctx.out.write(`${JSON.stringify(created)}\n`);
}

/** `api-key list`: a table of the keys on `ctx.out`, or one JSON object a line with --json. */
async function listKeys(ctx: ApiKeyContext, options: { organization?: string; json?: boolean }): Promise<void> {
  const { listApiKeys } = await import("../services/api-keys.js");
  const keys = await withDatabase(ctx, (database) =>
    listApiKeys(database.prisma, { organization: options.organization }),
  );
  if (options.json) {
    for (const k of keys) ctx.out.write(`${JSON.stringify(k)}\n`);
    return;
  }
  ctx.out.write(formatTable(keys));
}

/** `api-key revoke <id>`: revokes key `id` (NotFoundError when there is none) and says when, or when it already was. */
async function revokeKey(ctx: ApiKeyContext, id: string): Promise<void> {
  const { revokeApiKey } = await import("../services/api-keys.js");
  const revoked = await withDatabase(ctx, (database) => revokeApiKey(database.prisma, id));
  if (!revoked.already_revoked) ctx.notes.write(`revoked in ${ctx.database}\n`);
  ctx.out.write(
    revoked.already_revoked
      ? `${revoked.id} (${revoked.prefix}…) was already revoked at ${revoked.revoked_at}\n`
      : `${revoked.id} (${revoked.prefix}…) revoked at ${revoked.revoked_at}\n`,
  );
}

type Listing = Awaited<ReturnType<typeof import("../services/api-keys.js").listApiKeys>>[number];

/** Plain text table, one key a line, `-` for empty times; "no API keys" when there are none. */
function formatTable(keys: Listing[]): string {
  if (!keys.length) return "no API keys\n";
  const header = [
    "ID",
    "PREFIX",
    "ORGANIZATION",
    "NAME",
    "MODE",
    "EMAIL",
    "CREATED",
    "LAST USED",
    "EXPIRES",
    "REVOKED",
  ];
  const rows = keys.map((k) => [
    k.id,
    k.prefix,
    k.organization.id,
    k.organization.name,
    k.mode,
    k.email,
    k.created_at,
    k.last_used_at ?? "-",
    k.expires_at ?? "-",
    k.revoked_at ?? "-",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return (
    [header, ...rows]
      .map((r) =>
        r
          .map((cell, i) => cell.padEnd(widths[i]))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
}
