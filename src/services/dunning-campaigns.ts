/**
 * Dunning campaigns (REST /v1/dunning_campaigns/, GraphQL createDunningCampaign, ...; docs/dunning.md): how the
 * service recovers what customers owe after the due date. Field rules: domain/dunning.ts.
 *
 * - `code` is unique per organization and mode, and at most one campaign per organization and mode is the
 *   default (`applied_to_organization`): a second one is a 400 on the field, never a silent switch. Creates and
 *   updates lock the organization's row, so two concurrent requests cannot both pass the checks (the unique
 *   indexes hold them too).
 * - `thresholds` on an update replace the whole list.
 * - A campaign that customers name (`dunning_campaign`) cannot be deleted: 409 saying how many; move them to
 *   another campaign (or null, the default) first. A customer naming a campaign locks it (FOR SHARE) in its own
 *   transaction, so a delete and a customer write never cross.
 * - Campaigns write no events (as the catalogue does not); the customers that name one do (`customer.updated`).
 */
import type { DunningCampaign, Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { FieldErrorCollector, InvalidStateError, NotFoundError } from "../domain/errors.js";
import {
  campaignCodeProblem,
  checkBccEmails,
  checkThresholds,
  checkWholeInRange,
  DAYS_BETWEEN_ATTEMPTS,
  FINAL_ACTIONS,
  MAX_ATTEMPTS,
  type ResolvedThreshold,
} from "../domain/dunning.js";
import type { DecimalInput } from "../domain/money.js";
import { atomically, lockTenantRow, tenant, type ServiceContext } from "./context.js";
import { Fields } from "./catalogue.js";

export interface DunningThresholdInput {
  /** ISO 4217 code */
  currency?: string | null;
  amount?: DecimalInput | null;
}

/** A campaign's fields as given (create: name, code, thresholds, days and attempts required; update: what changes). */
export interface DunningCampaignInput {
  name?: string | null;
  code?: string | null;
  description?: string | null;
  thresholds?: readonly DunningThresholdInput[] | null;
  daysBetweenAttempts?: number | null;
  maxAttempts?: number | null;
  retryCard?: boolean | null;
  sendEmail?: boolean | null;
  bccEmails?: readonly string[] | null;
  finalAction?: string | null;
  appliedToOrganization?: boolean | null;
}

type CampaignColumns = Omit<Prisma.DunningCampaignUncheckedCreateInput, "id" | "organizationId" | "testMode">;
type ThresholdRow = { currencyId: string; amount: string; position: number };

/** The thresholds given, checked: their rows, or null when not given (an update keeps them). */
async function thresholdRows(f: Fields, given: DunningCampaignInput["thresholds"]): Promise<ThresholdRow[] | null> {
  if (given === undefined) return null;
  const resolved: ResolvedThreshold[] = [];
  for (const [i, t] of (given ?? []).entries()) {
    const currency = await f.currency(`thresholds.${i}.currency`, t.currency ?? null, null);
    const amount = f.amount(`thresholds.${i}.amount`, t.amount ?? null, null);
    resolved.push({ currency, amount });
  }
  checkThresholds(f.errors, resolved);
  return resolved.map((t, position) => ({
    currencyId: t.currency?.id ?? "",
    amount: (t.amount ?? 0).toString(),
    position,
  }));
}

/** The columns of `input` over `current` (null on create); every problem a field error of `f`. */
async function campaignColumns(f: Fields, input: DunningCampaignInput, current: DunningCampaign | null) {
  const name = f.text("name", input.name, current?.name, { required: true });
  const code = f.text("code", input.code, current?.code, { required: true, max: 1_000 });
  if (code) {
    const problem = campaignCodeProblem(code);
    if (problem) f.errors.add("code", problem);
  }
  const description = f.text("description", input.description, current?.description, { max: 1_000 });
  const days = input.daysBetweenAttempts !== undefined ? input.daysBetweenAttempts : current?.daysBetweenAttempts;
  checkWholeInRange(f.errors, "days_between_attempts", days ?? null, DAYS_BETWEEN_ATTEMPTS);
  const attempts = input.maxAttempts !== undefined ? input.maxAttempts : current?.maxAttempts;
  checkWholeInRange(f.errors, "max_attempts", attempts ?? null, MAX_ATTEMPTS);
  const finalAction = f.choice("final_action", FINAL_ACTIONS, input.finalAction, current?.finalAction, "none");
  const bccEmails =
    input.bccEmails !== undefined ? [...(input.bccEmails ?? [])] : ((current?.bccEmails as string[]) ?? []);
  if (input.bccEmails !== undefined) checkBccEmails(f.errors, bccEmails);
  const thresholds = await thresholdRows(f, current ? input.thresholds : (input.thresholds ?? []));
  const columns: CampaignColumns = {
    name: name ?? "",
    code: code ?? "",
    description,
    daysBetweenAttempts: days ?? 0,
    maxAttempts: attempts ?? 0,
    retryCard: input.retryCard ?? current?.retryCard ?? true,
    sendEmail: input.sendEmail ?? current?.sendEmail ?? true,
    bccEmails,
    finalAction,
    appliedToOrganization: input.appliedToOrganization ?? current?.appliedToOrganization ?? false,
  };
  return { columns, thresholds };
}

/**
 * Adds the errors only the organization's other campaigns tell: `code` taken, or `applied_to_organization` true
 * while another campaign is the default. Run with the organization's row locked (`lockOrganization`).
 */
async function checkAgainstOthers(
  ctx: ServiceContext,
  errors: FieldErrorCollector,
  columns: CampaignColumns,
  id: string | null,
): Promise<void> {
  const others = { ...tenant(ctx), ...(id ? { NOT: { id } } : {}) };
  if (columns.code) {
    const taken = await ctx.prisma.dunningCampaign.findFirst({ where: { ...others, code: columns.code } });
    if (taken) errors.add("code", `${columns.code} is the code of ${taken.id} already (codes are unique)`);
  }
  if (columns.appliedToOrganization) {
    const current = await ctx.prisma.dunningCampaign.findFirst({ where: { ...others, appliedToOrganization: true } });
    if (current)
      errors.add(
        "applied_to_organization",
        `${current.id} is the organization's default campaign already (at most one): set its ` +
          "applied_to_organization to false first",
      );
  }
}

/** Locks the caller's organization row until the transaction ends: campaign writes of one organization queue. */
async function lockOrganization(ctx: ServiceContext): Promise<void> {
  await ctx.prisma.$queryRaw`SELECT 1 FROM "Organization" WHERE "id" = ${ctx.auth.organizationId} FOR UPDATE`;
}

async function loadCampaign(ctx: ServiceContext, id: string): Promise<DunningCampaign> {
  if (!(await lockTenantRow(ctx.prisma, ctx, "DunningCampaign", id))) throw new NotFoundError("dunning campaign", id);
  return ctx.prisma.dunningCampaign.findUniqueOrThrow({ where: { id } });
}

/** Creates a campaign; 400 naming every bad field, nothing written then. */
export async function createDunningCampaign(
  ctx: ServiceContext,
  input: DunningCampaignInput,
): Promise<DunningCampaign> {
  return atomically(ctx, async (tx) => {
    const f = new Fields(tx);
    const { columns, thresholds } = await campaignColumns(f, input, null);
    await lockOrganization(tx);
    await checkAgainstOthers(tx, f.errors, columns, null);
    f.errors.throwIfAny("Invalid dunning campaign");
    const id = newId("dun");
    const created = await tx.prisma.dunningCampaign.create({ data: { id, ...tenant(tx), ...columns } });
    await writeThresholds(tx, id, thresholds ?? []);
    return created;
  });
}

/** Updates the given fields (thresholds replace the list); 404 for another tenant's campaign, 400 as on create. */
export async function updateDunningCampaign(
  ctx: ServiceContext,
  id: string,
  input: DunningCampaignInput,
): Promise<DunningCampaign> {
  return atomically(ctx, async (tx) => {
    const current = await loadCampaign(tx, id);
    const f = new Fields(tx);
    const { columns, thresholds } = await campaignColumns(f, input, current);
    await lockOrganization(tx);
    await checkAgainstOthers(tx, f.errors, columns, current.id);
    f.errors.throwIfAny("Invalid dunning campaign");
    const updated = await tx.prisma.dunningCampaign.update({ where: { id: current.id }, data: columns });
    if (thresholds) {
      await tx.prisma.dunningCampaignThreshold.deleteMany({ where: { campaignId: current.id } });
      await writeThresholds(tx, current.id, thresholds);
    }
    return updated;
  });
}

async function writeThresholds(ctx: ServiceContext, campaignId: string, rows: readonly ThresholdRow[]) {
  if (rows.length === 0) return;
  const organizationId = ctx.auth.organizationId;
  await ctx.prisma.dunningCampaignThreshold.createMany({
    data: rows.map((r) => ({ campaignId, organizationId, ...r })),
  });
}

/**
 * Deletes a campaign no customer names (its thresholds with it); 409 when customers name it, 404 for another
 * tenant's campaign.
 */
export async function deleteDunningCampaign(ctx: ServiceContext, id: string): Promise<{ id: string }> {
  return atomically(ctx, async (tx) => {
    const campaign = await loadCampaign(tx, id);
    const customers = await tx.prisma.customer.count({ where: { dunningCampaignId: campaign.id } });
    if (customers > 0)
      throw new InvalidStateError(
        `Dunning campaign ${campaign.id} is the dunning_campaign of ${customers} customer` +
          `${customers === 1 ? "" : "s"}: set theirs to another campaign, or to null for the default, first`,
      );
    await tx.prisma.dunningCampaign.delete({ where: { id: campaign.id } });
    return { id: campaign.id };
  });
}

/**
 * Checks the campaign a customer names (`dunning_campaign`): an empty value is null (the default campaign);
 * another is the id of a campaign of the caller's organization and mode, else an error on `field`. Inside a
 * transaction the campaign's row is locked FOR SHARE until it ends, so it cannot be deleted meanwhile
 * (deleteDunningCampaign locks it FOR UPDATE and then counts the customers that name it).
 */
export async function resolveDunningCampaign(
  ctx: ServiceContext,
  value: string | null,
  errors: FieldErrorCollector,
  field = "dunning_campaign",
): Promise<string | null> {
  if (!value) return null;
  const lock = ctx.inTransaction ? " FOR SHARE" : "";
  const rows = await ctx.prisma.$queryRawUnsafe<{ id: string }[]>(
    `SELECT "id" FROM "DunningCampaign" WHERE "id" = $1 AND "organizationId" = $2 AND "testMode" = $3${lock}`,
    value,
    ctx.auth.organizationId,
    ctx.auth.testMode,
  );
  if (rows.length === 0) errors.add(field, `no dunning campaign with id ${value.slice(0, 200)}`);
  return rows[0]?.id ?? null;
}
