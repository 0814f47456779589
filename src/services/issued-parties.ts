/**
 * The parties of an issued document (rules: domain/issued-parties.ts; docs/decisions.md "Issued
 * documents"): `snapshotParties` takes the snapshot at finalize, inside the finalize transaction;
 * `documentCustomer` and `documentIssuer` are the one way readers (GraphQL's `issuedCustomer` and
 * `issuer`, and through them REST, the PDF, reminder attachments) get "the party as issued": the
 * snapshot once finalized, live data on drafts.
 */
import type { Prisma } from "../infra/prisma/generated/client.js";
import {
  customerAsIssued,
  customerSnapshot,
  issuedIssuerOf,
  issuerSnapshot,
  type CustomerColumns,
  type DocumentWithSnapshot,
  type IssuedCustomer,
  type IssuedIssuer,
} from "../domain/issued-parties.js";
import { taxProfileOf } from "./tax-profile.js";
import { organizationName, readSettings, type OrganizationSettings } from "./organization-settings.js";
import type { DocumentKind } from "../domain/document-status.js";
import { tenant, type ServiceContext, type TenantKey, type Tx } from "./context.js";

export interface IssuedParties {
  customer: IssuedCustomer;
  issuer: IssuedIssuer;
}

/**
 * The issuer of a mode as its settings describe it: their tax profile (services/tax-profile.ts), and
 * the organization's `name` and branding business name for the printed name (domain/issued-parties.ts
 * issuerSnapshot). No database access.
 */
function issuerOf(name: string, settings: OrganizationSettings): IssuedIssuer {
  return issuerSnapshot({ name, businessName: settings.businessName }, taxProfileOf(settings));
}

/**
 * The settings of `owner`'s mode and the issuer they describe (issuerOf): two statements on `db` (a transaction's
 * client keeps them in it), the organization's name and the settings row.
 */
export async function readIssuer(
  db: Pick<Tx, "organization" | "organizationSettings">,
  owner: TenantKey,
): Promise<{ settings: OrganizationSettings; issuer: IssuedIssuer }> {
  const [name, settings] = await Promise.all([organizationName(db, owner.organizationId), readSettings(db, owner)]);
  return { settings, issuer: issuerOf(name, settings) };
}

/** The issuer now, in the caller's mode (readIssuer). */
export async function currentIssuer(ctx: ServiceContext): Promise<IssuedIssuer> {
  return (await readIssuer(ctx.prisma, tenant(ctx))).issuer;
}

/** The customer a document of `kind` is issued to (a credit note's: its invoice's). */
async function documentCustomerRow(ctx: ServiceContext, kind: DocumentKind, id: string) {
  if (kind === "invoice")
    return (await ctx.prisma.invoice.findUniqueOrThrow({ where: { id }, select: { customer: true } })).customer;
  if (kind === "order")
    return (await ctx.prisma.order.findUniqueOrThrow({ where: { id }, select: { customer: true } })).customer;
  return (
    await ctx.prisma.creditNote.findUniqueOrThrow({
      where: { id },
      select: { invoice: { select: { customer: true } } },
    })
  ).invoice.customer;
}

/**
 * The parties of document `kind`/`id` as they are now, for its snapshot: its customer read now and
 * `issuer` (the finalize's, services/issuing.ts). Call with a context inside the finalize transaction
 * (withinTransaction), so the snapshot and the finalize commit together. Also what the DTE is built
 * from (services/tax-documents.ts).
 */
export async function snapshotParties(
  ctx: ServiceContext,
  kind: DocumentKind,
  id: string,
  issuer: IssuedIssuer,
): Promise<IssuedParties> {
  return { customer: customerSnapshot(await documentCustomerRow(ctx, kind, id)), issuer };
}

/** The columns finalize writes with the snapshot. */
export function snapshotColumns(parties: IssuedParties) {
  return {
    customerSnapshot: parties.customer as unknown as Prisma.InputJsonValue,
    issuerSnapshot: parties.issuer as unknown as Prisma.InputJsonValue,
  };
}

/**
 * The customers' snapshots for many documents finalized together (the billing run's bulk finalize):
 * each customer read once, with one statement. `customerIds` in any order; returns the snapshot by
 * customer id.
 */
export async function customerSnapshots(
  db: Pick<Tx, "customer">,
  customerIds: readonly string[],
): Promise<Map<string, IssuedCustomer>> {
  const rows = await db.customer.findMany({ where: { id: { in: [...new Set(customerIds)] } } });
  return new Map(rows.map((c) => [c.id, customerSnapshot(c)]));
}

/**
 * The customer of `doc` as issued: `live` (the customer row now, with whatever relations it was
 * loaded with) with the snapshot's columns once `doc` is finalized. A `country` or `state`
 * relation loaded with `live` is reloaded (reference data, whole rows) when the snapshot names
 * another one. Drafts: `live` itself.
 */
export async function documentCustomer<T extends CustomerColumns>(
  ctx: ServiceContext,
  doc: DocumentWithSnapshot,
  live: T,
): Promise<T> {
  const issued = customerAsIssued(doc, live);
  if (issued === live) return live;
  const out = issued as unknown as Record<string, unknown>;
  const relations = live as unknown as Record<string, unknown>;
  for (const [name, key, load] of [
    ["country", "countryId", (id: string) => ctx.prisma.country.findUnique({ where: { id } })],
    ["state", "stateId", (id: string) => ctx.prisma.state.findUnique({ where: { id } })],
  ] as const) {
    if (!(name in relations) || issued[key] === live[key]) continue;
    const id = issued[key];
    out[name] = id ? await load(id) : null;
  }
  return issued;
}

/** Per request: the live issuer, read once (drafts only need it). */
const liveIssuers = new WeakMap<object, Promise<IssuedIssuer>>();

/** The issuer of `doc` as issued: its snapshot once finalized, the organization's now on drafts. */
export async function documentIssuer(ctx: ServiceContext, doc: DocumentWithSnapshot): Promise<IssuedIssuer> {
  const snapshot = issuedIssuerOf(doc);
  if (snapshot) return snapshot;
  let live = liveIssuers.get(ctx);
  if (!live) liveIssuers.set(ctx, (live = currentIssuer(ctx)));
  return live;
}
