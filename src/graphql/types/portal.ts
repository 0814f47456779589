/**
 * The customer portal's part of the schema (docs/customer-portal.md): the `portal` query a
 * portal credential starts from, and the fields the portal reads that every API key may use too:
 * the customer's documents and subscriptions as connections, and a document's DTE file. The
 * mutations the portal calls live with their resources, marked PORTAL_FIELD (builder.ts).
 */
import { builder } from "../builder.js";
import { Language } from "../enums.js";
import { documentConnection, offsetArg, tenantConnection } from "../pagination.js";
import { invoicesVisible, tenant, visibleDocuments } from "../../services/context.js";
import { readSettings } from "../../services/organization-settings.js";
import { fileNameOfUrl } from "../../services/files.js";
import { findGateway } from "../../infra/gateways/index.js";
import { storedSessionSettings, type SessionSettings } from "../../domain/customer-sessions.js";
import {
  clearedCredentialCookies,
  portalColors,
  portalLocale,
  type PortalColors as PortalColorsValue,
} from "../../domain/portal.js";
import { signOutPortal } from "../../services/portal.js";
import type { GraphQLContext } from "../context.js";
import { Invoice } from "./invoice.js";
import { CreditNote } from "./credit-note.js";
import { Order } from "./order.js";
import { Subscription } from "./subscription.js";
import { StoredFile } from "./sii.js";
import { CustomerSessionSettings } from "./customer-session.js";
import "./upcoming-invoice.js";

/**
 * Conditions that match no invoice when the caller may not see invoices (a portal credential whose session hides
 * them, services/context.ts `invoicesVisible`); none otherwise.
 */
function noInvoicesUnlessVisible(ctx: GraphQLContext): object[] {
  return invoicesVisible(ctx) ? [] : [{ id: { in: [] } }];
}

// ---------------------------------------------------------------------------------------------
// the customer's lists (every API key; the portal reads them under portal.customer)

builder.prismaObjectFields("Customer", (t) => ({
  invoices: t.connection(
    {
      type: Invoice,
      description:
        "The customer's invoices, newest first, ties by number as in `invoices`: drafts included for an API " +
        "key; a customer-portal credential sees finalized ones only, and none when its session hides invoices " +
        "(`displayInvoices` false).",
      args: { offset: offsetArg(t) },
      resolve: (customer, args, ctx, info) =>
        documentConnection(ctx, info, ctx.prisma.invoice, args, [
          { customerId: customer.id },
          ...visibleDocuments(ctx),
          ...noInvoicesUnlessVisible(ctx),
        ]),
    },
    { description: "A page of a customer's invoices, newest first." },
    { description: "An invoice of the customer, with its cursor." },
  ),
  creditNotes: t.connection(
    {
      type: CreditNote,
      description:
        "Credit and debit notes of the customer's invoices, newest first, ties by number as in `creditNotes`: " +
        "drafts included for an API key; a " +
        "customer-portal credential sees finalized ones only.",
      args: { offset: offsetArg(t) },
      resolve: (customer, args, ctx, info) =>
        documentConnection(ctx, info, ctx.prisma.creditNote, args, [
          { invoice: { customerId: customer.id } },
          ...visibleDocuments(ctx),
        ]),
    },
    { description: "A page of a customer's credit notes, newest first." },
    { description: "A credit note of the customer, with its cursor." },
  ),
  orders: t.connection(
    {
      type: Order,
      description:
        "The customer's orders, newest first, ties by number as in `orders`: drafts included for an API key; a " +
        "customer-portal credential sees " +
        "finalized ones only.",
      args: { offset: offsetArg(t) },
      resolve: (customer, args, ctx, info) =>
        documentConnection(ctx, info, ctx.prisma.order, args, [{ customerId: customer.id }, ...visibleDocuments(ctx)]),
    },
    { description: "A page of a customer's orders, newest first." },
    { description: "An order of the customer, with its cursor." },
  ),
  subscriptions: t.connection(
    {
      type: Subscription,
      description: "The customer's subscriptions (cancelled ones included), newest first.",
      args: { offset: offsetArg(t) },
      resolve: (customer, args, ctx, info) =>
        tenantConnection(ctx, info, ctx.prisma.subscription, args, [{ customerId: customer.id }]),
    },
    { description: "A page of a customer's subscriptions, newest first." },
    { description: "A subscription of the customer, with its cursor." },
  ),
}));

/** The stored DTE file a document's localFile names, in the caller's organization and mode; null when it has none. */
async function dteFile(ctx: GraphQLContext, localFile: string | null) {
  if (!localFile) return null;
  const file = await ctx.prisma.storedFile.findFirst({ where: { name: fileNameOfUrl(localFile), ...tenant(ctx) } });
  return file
    ? {
        name: file.name,
        contentType: file.contentType,
        content: Buffer.from(file.content).toString("base64"),
        created: file.createdAt,
      }
    : null;
}

for (const model of ["Invoice", "CreditNote", "Order"] as const) {
  builder.prismaObjectField(model, "dte", (t) =>
    t.field({
      type: StoredFile,
      nullable: true,
      select: { localFile: true },
      description:
        "the document's DTE as SII received it (the XML file `localFile` points at, its bytes in base64); null for " +
        "a document that is not a DTE",
      resolve: (doc, _args, ctx) => dteFile(ctx, doc.localFile),
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// the portal's entry point

interface PortalValue {
  customerId: string;
  settings: SessionSettings;
  expiresAt: Date;
}

const PortalColors = builder.objectRef<PortalColorsValue>("PortalColors").implement({
  description:
    "The colours the portal paints with, from the branding, checked for contrast (WCAG 2.x ratio at least 4.5 " +
    "where text meets its background; domain/portal.ts).",
  fields: (t) => ({
    background: t.exposeString("background", { description: "page background, #rrggbb (the branding's, else white)" }),
    text: t.exposeString("text", { description: "body text on the background: near black or white, #rrggbb" }),
    asset: t.exposeString("asset", {
      description:
        "links and buttons, #rrggbb: the branding's asset colour when readable on the background, else the text colour",
    }),
    onAsset: t.exposeString("onAsset", { description: "text on an asset-coloured button, #rrggbb" }),
    adjusted: t.exposeBoolean("adjusted", {
      description: "true when the branding's asset colour was replaced because it was not readable",
    }),
  }),
});

const PortalSession = builder.objectRef<PortalValue>("PortalSession").implement({
  description:
    "What a customer-portal credential opens: its customer, the session's branding, and what the portal offers.",
  fields: (t) => ({
    customer: t.prismaField({
      type: "Customer",
      description: "the customer the portal shows",
      resolve: (query, portal, _args, ctx) =>
        ctx.prisma.customer.findUniqueOrThrow({ ...query, where: { id: portal.customerId } }),
    }),
    settings: t.field({
      type: CustomerSessionSettings,
      description: "the session's branding snapshot and return URL (docs/customer-sessions.md)",
      resolve: (portal) => portal.settings,
    }),
    colors: t.field({
      type: PortalColors,
      description: "readable colours from the settings' colours",
      resolve: (portal) => portalColors(portal.settings.colorBackground, portal.settings.colorAsset),
    }),
    locale: t.field({
      type: Language,
      description: "the portal's language by the customer's country: es (Spanish-speaking countries) or en",
      resolve: async (portal, _args, ctx) => {
        const customer = await ctx.prisma.customer.findUniqueOrThrow({
          where: { id: portal.customerId },
          select: { countryId: true },
        });
        return portalLocale(customer.countryId);
      },
    }),
    cancelSubscriptions: t.boolean({
      description:
        "whether the customer may cancel subscriptions at period end (the branding's portalCancelSubscriptions, as " +
        "it is now)",
      resolve: async (_portal, _args, ctx) => (await readSettings(ctx.prisma, tenant(ctx))).portalCancelSubscriptions,
    }),
    gateways: t.stringList({
      description:
        "payment gateways a new card or checkout can use here: the enabled ones allowed in the session's mode " +
        "(test, redirect)",
      resolve: (_portal, _args, ctx) =>
        ctx.settings.paymentGateways.filter((name) => {
          const gateway = findGateway(name, ctx.settings.paymentGateways);
          return gateway && (!gateway.testOnly || ctx.auth.testMode);
        }),
    }),
    expires: t.expose("expiresAt", { type: "DateTime", description: "when the portal credential stops working" }),
  }),
});

// the documents a portal credential opens, each of its customer only
builder.objectFields(PortalSession, (t) => ({
  invoice: t.prismaField({
    type: "Invoice",
    nullable: true,
    description:
      "one of the customer's finalized invoices; null for any other id (unknown, another customer's, or a draft, " +
      "which the portal never shows), and for every id when the session hides invoices " +
      "(`settings.displayInvoices` false)",
    args: { id: t.arg.id({ required: true, description: "`inv_` id" }) },
    resolve: (query, portal, args, ctx) =>
      ctx.prisma.invoice.findFirst({
        ...query,
        where: {
          id: String(args.id),
          customerId: portal.customerId,
          ...tenant(ctx),
          AND: [...visibleDocuments(ctx), ...noInvoicesUnlessVisible(ctx)],
        },
      }),
  }),
  creditNote: t.prismaField({
    type: "CreditNote",
    nullable: true,
    description:
      "one of the customer's finalized credit notes; null for any other id (unknown, another customer's, or a " +
      "draft)",
    args: { id: t.arg.id({ required: true, description: "`cre_` id" }) },
    resolve: (query, portal, args, ctx) =>
      ctx.prisma.creditNote.findFirst({
        ...query,
        where: {
          id: String(args.id),
          invoice: { customerId: portal.customerId },
          ...tenant(ctx),
          AND: visibleDocuments(ctx),
        },
      }),
  }),
  order: t.prismaField({
    type: "Order",
    nullable: true,
    description:
      "one of the customer's finalized orders; null for any other id (unknown, another customer's, or a draft)",
    args: { id: t.arg.id({ required: true, description: "`ord_` id" }) },
    resolve: (query, portal, args, ctx) =>
      ctx.prisma.order.findFirst({
        ...query,
        where: { id: String(args.id), customerId: portal.customerId, ...tenant(ctx), AND: visibleDocuments(ctx) },
      }),
  }),
}));

builder.queryFields((t) => ({
  portal: t.field({
    authScopes: { portal: true },
    skipTypeScopes: true,
    type: PortalSession,
    description:
      "The customer portal's entry point, for a portal credential only (an API key gets permission_denied): its " +
      "customer, branding and options (docs/customer-portal.md).",
    resolve: async (_root, _args, ctx) => {
      const portal = ctx.auth.portal!;
      const [session, credential] = await Promise.all([
        ctx.prisma.customerSession.findUniqueOrThrow({ where: { id: portal.sessionId } }),
        ctx.prisma.portalCredential.findUniqueOrThrow({
          where: { id: portal.credentialId },
          select: { expiresAt: true },
        }),
      ]);
      return {
        customerId: portal.customerId,
        settings: storedSessionSettings(session.settings, session.returnUrl),
        expiresAt: credential.expiresAt,
      };
    },
  }),
}));

// ---------------------------------------------------------------------------------------------
// signing out

const PortalSignOut = builder.objectRef<{ returnUrl: string }>("PortalSignOut").implement({
  description: "The answer of signOutPortal: the credential is gone and its cookies cleared.",
  fields: (t) => ({
    returnUrl: t.exposeString("returnUrl", {
      description: 'the session\'s return URL, where the signed-out page links ("Return to the business")',
    }),
  }),
});

builder.mutationFields((t) => ({
  signOutPortal: t.field({
    authScopes: { portal: true },
    skipTypeScopes: true,
    type: PortalSignOut,
    description:
      "Signs the customer out of the portal, for a portal credential only (an API key gets permission_denied): " +
      "deletes the credential the request carries and clears its two cookies (Set-Cookie with Max-Age=0), so the " +
      "cookie opens nothing any more. The session itself stays: its link, while live, opens a new credential " +
      "(revokeCustomerSession ends it).",
    resolve: async (_root, _args, ctx) => {
      const answer = await signOutPortal(ctx);
      ctx.responseCookies?.push(...clearedCredentialCookies(ctx.baseUrl.startsWith("https:")));
      return answer;
    },
  }),
}));
