/** What every use case needs: the database and who is asking (organization, mode, user). */
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import type { AppSettings } from "../infra/config.js";
import { NotFoundError, PermissionError } from "../domain/errors.js";
import { PORTAL_DOCUMENT_STATUS, portalShowsDocument } from "../domain/portal.js";
import type { MemberRole } from "../domain/members.js";

export interface Auth {
  organizationId: string;
  testMode: boolean;
  /** e-mail of the API key's user, written as `user` on documents */
  userEmail: string;
  apiKeyId: string;
  /**
   * Set when the request carries a customer-portal credential instead of an API key
   * (docs/customer-portal.md): the one customer it may read and act on, in `organizationId` and
   * `testMode`. The GraphQL schema lets such a request reach only the fields marked for the
   * portal (scope `portal`), and the services check that every id it names is this customer's.
   */
  portal?: PortalAuth;
  /**
   * Set when the request carries a dashboard member's session instead of an API key (docs/dashboard.md): the
   * member acts with its role's permissions (the GraphQL scopes `writer` and `admin`), in `organizationId` and the
   * mode its X-Dashboard-Mode header names; `userEmail` is the member's e-mail.
   */
  member?: MemberAuth;
}

/** Who a dashboard session acts for. */
export interface MemberAuth {
  /** `mem_` id of the member */
  memberId: string;
  /** the member's role now (read with the session on every request) */
  role: MemberRole;
  /** `mse_` id of the session (sign-out ends it) */
  sessionId: string;
}

/** Who a customer-portal credential acts for. */
export interface PortalAuth {
  /** `cus_` id of the customer */
  customerId: string;
  /** `ses_` id of the session whose key was exchanged for the credential */
  sessionId: string;
  /** `pcr_` id of the credential */
  credentialId: string;
  /**
   * the session's `displayInvoices` (its settings snapshot): false hides every invoice of the customer from the
   * credential (docs/customer-portal.md "Sessions that hide invoices")
   */
  displayInvoices: boolean;
}

export interface ServiceContext {
  prisma: PrismaClient;
  auth: Auth;
  /** current time (tests and test clocks may fix it) */
  now: () => Date;
  /** run-time settings (mail, sessions, payments) */
  settings: AppSettings;
  /** absolute base URL of the service for links in responses (`http://host:3000`): PUBLIC_URL, else the request's origin */
  baseUrl: string;
  /** true when `prisma` is a transaction's client (withinTransaction): `atomically` runs in it */
  inTransaction?: boolean;
}

/** An organization and a mode: whose rows (and whose settings) a query is about. */
export interface TenantKey {
  organizationId: string;
  testMode: boolean;
}

/** The tenant filter every query of a tenant table carries. */
export function tenant(ctx: ServiceContext): TenantKey {
  return { organizationId: ctx.auth.organizationId, testMode: ctx.auth.testMode };
}

export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

/** Tables whose rows belong to a tenant (organizationId, testMode) and that use cases lock. */
export type TenantTable =
  | "Swap"
  | "Invoice"
  | "Order"
  | "CreditNote"
  | "Payment"
  | "Source"
  | "Usage"
  | "Subscription"
  | "Product"
  | "Plan"
  | "Addon"
  | "Coupon"
  | "WebhookEndpoint"
  | "DunningCampaign"
  | "Customer";

/**
 * Locks row `id` of `table` if it belongs to the caller's organization and mode
 * (`SELECT ... FOR UPDATE`, held until the transaction `db` ends) and returns `columns` of it, or
 * null when the caller has no such row. Concurrent changes of one row queue on this lock.
 */
export async function lockTenantRow<C extends string = "id">(
  db: Pick<Tx, "$queryRawUnsafe">,
  ctx: ServiceContext,
  table: TenantTable,
  id: string,
  columns: readonly C[] = ["id"] as unknown as C[],
): Promise<Record<C, unknown> | null> {
  const rows = await db.$queryRawUnsafe<Record<C, unknown>[]>(
    `SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}" WHERE "id" = $1 AND "organizationId" = $2 AND ` +
      `"testMode" = $3 FOR UPDATE`,
    id,
    ctx.auth.organizationId,
    ctx.auth.testMode,
  );
  return rows[0] ?? null;
}

/**
 * The same context with every query going through transaction `tx`. Use it for reads made while
 * a transaction holds locks: on PGlite (one connection) a read outside the transaction would wait
 * for it to end, and on PostgreSQL it would not see the transaction's writes.
 */
export function withinTransaction(ctx: ServiceContext, tx: Tx): ServiceContext {
  return { ...ctx, prisma: tx as unknown as ServiceContext["prisma"], inTransaction: true };
}

/**
 * Runs `fn` in one transaction: the one `ctx` already runs in (`withinTransaction`), else a new
 * one (which, in a keyed request, joins the request's: services/request-transaction.ts).
 */
export function atomically<T>(ctx: ServiceContext, fn: (tx: ServiceContext) => Promise<T>): Promise<T> {
  if (ctx.inTransaction) return fn(ctx);
  return ctx.prisma.$transaction((tx) => fn(withinTransaction(ctx, tx)));
}

/**
 * A customer-portal credential may only touch its own customer's rows (docs/customer-portal.md):
 * throws NotFoundError for `resource` `id` when the caller is a portal credential and the row's
 * customer (`customerId`, null when the row has none) is not its customer, so another customer's
 * ids read exactly like unknown ones. Does nothing for API keys.
 */
export function checkPortalCustomer(
  ctx: ServiceContext,
  customerId: string | null | undefined,
  resource: string,
  id: string,
): void {
  if (ctx.auth.portal && customerId !== ctx.auth.portal.customerId) throw new NotFoundError(resource, id);
}

/**
 * The Prisma conditions (AND-ed into a `where`) limiting invoices, orders or credit notes to those the caller may see:
 * none for an API key; for a customer-portal credential, issued documents only (`status` finalized, domain/portal.ts
 * PORTAL_DOCUMENT_STATUS), so a draft is absent from its lists and null where it reads one.
 */
export function visibleDocuments(ctx: Pick<ServiceContext, "auth">): { status: string }[] {
  return ctx.auth.portal ? [{ status: PORTAL_DOCUMENT_STATUS }] : [];
}

/** True when the caller may see a document of `status`: every API key, and a portal credential an issued one. */
export function documentVisible(ctx: Pick<ServiceContext, "auth">, status: string): boolean {
  return !ctx.auth.portal || portalShowsDocument(status);
}

/**
 * `checkPortalCustomer` for an invoice, order or credit note: to a portal credential, another customer's document
 * and a draft of its own customer both throw NotFoundError for `resource` `id`, exactly like an unknown id
 * (docs/customer-portal.md "Only issued documents"). Does nothing for API keys.
 */
export function checkPortalDocument(
  ctx: ServiceContext,
  doc: { customerId: string | null | undefined; status: string },
  resource: string,
  id: string,
): void {
  checkPortalCustomer(ctx, doc.customerId, resource, id);
  if (!documentVisible(ctx, doc.status)) throw new NotFoundError(resource, id);
}

/** Message of the refusal a portal credential gets for an invoice when its session hides invoices. */
export const PORTAL_INVOICES_HIDDEN =
  "This customer portal does not show invoices (the session's displayInvoices is off)";

/**
 * True when the caller may see the customer's invoices: every API key, and a portal credential whose session shows
 * invoices (`displayInvoices`, docs/customer-portal.md).
 */
export function invoicesVisible(ctx: Pick<ServiceContext, "auth">): boolean {
  return !ctx.auth.portal || ctx.auth.portal.displayInvoices;
}

/**
 * Throws PermissionError (PORTAL_INVOICES_HIDDEN) when the caller is a portal credential whose session hides invoices.
 */
export function checkPortalInvoices(ctx: Pick<ServiceContext, "auth">): void {
  if (!invoicesVisible(ctx)) throw new PermissionError(PORTAL_INVOICES_HIDDEN);
}
