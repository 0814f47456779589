/**
 * `member` commands of the command line (wired into src/cli/program.ts; docs/dashboard.md "Members and sign-in"):
 *   member invite --organization <name or org_ id> --email <e-mail> --role <admin|finance|viewer> [--name <name>]
 *       prints the one-time invitation link `<PUBLIC_URL>/dashboard/invite/<token>` (valid 7 days) as its last line,
 *       and on stderr the member, the organization, whether the link was also e-mailed (through the outbox, when
 *       SMTP_URL is set: a running server's outbox worker sends it) and the database it wrote to
 * Errors (bad input, unknown organization, an e-mail that is already a member) are thrown as DomainError for the
 * caller to print and exit 1; nothing is written then.
 */
import { Command } from "commander";
import type { CommandContext } from "./context.js";

/**
 * The `member` command in context `ctx` (cli/context.ts): `ctx.out` receives the link (machine-readable), `ctx.notes`
 * the lines meant for a person. The link's base is PUBLIC_URL, else `http://localhost:<PORT>` (with a warning).
 */
export function memberCommands(
  ctx: Pick<CommandContext, "openDatabase" | "out" | "notes" | "database" | "settings">,
): Command {
  const command = new Command("member").description("manage the dashboard's team members");
  command
    .command("invite")
    .description("invite a person to an organization's dashboard: prints a one-time link where they choose a password")
    .requiredOption("--organization <name or id>", "an organization id (org_...), or its exact name")
    .requiredOption("--email <email>", "the person's e-mail (their sign-in name)")
    .requiredOption("--role <role>", "admin (everything), finance (no members, keys or settings) or viewer (read only)")
    .option("--name <name>", "the person's name (default: the e-mail's part before @)")
    .action(async (options: { organization: string; email: string; role: string; name?: string }) => {
      const { findOrganization, inviteMember } = await import("../services/members.js");
      const { config, settings } = await ctx.settings();
      const baseUrl = settings.publicUrl ?? `http://localhost:${config.port}`;
      if (!settings.publicUrl) ctx.notes.write(`warning: PUBLIC_URL is not set; the link starts with ${baseUrl}\n`);
      const database = await ctx.openDatabase();
      try {
        const organization = await findOrganization(database.prisma, options.organization);
        const invited = await inviteMember(
          { prisma: database.prisma, settings, baseUrl, now: new Date() },
          organization.id,
          { email: options.email, name: options.name, role: options.role },
        );
        const { member } = invited;
        ctx.notes.write(
          `invited ${member.email} (${member.id}, ${member.role}) to ${organization.id} ` +
            `${JSON.stringify(organization.name)}; the link works once, until ${invited.expiresAt.toISOString()}\n`,
        );
        ctx.notes.write(
          invited.emailQueued
            ? `the link is also e-mailed to ${member.email} (outbox)\n`
            : "SMTP_URL is not set: hand the link over yourself\n",
        );
        ctx.notes.write(`wrote the invitation to ${ctx.database}\n`);
        ctx.out.write(`${invited.link}\n`);
      } finally {
        await database.close();
      }
    });
  return command;
}
