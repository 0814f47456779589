/**
 * Customer sessions (spec "Session") and the organization's branding they copy: the
 * `CustomerSession` node, `createCustomerSession`, `customerSession(key)`, `organizationBranding`
 * and `updateOrganizationBranding`. Rules live in services/customer-sessions.ts, services/branding.ts
 * and domain/customer-sessions.ts.
 */
import { builder, ADMIN_FIELD } from "../builder.js";
import type { GraphQLContext } from "../context.js";
import { storedSessionSettings, URL_MAX_LENGTH, type SessionSettings } from "../../domain/customer-sessions.js";
import {
  activeSessionById,
  activeSessionByKey,
  createCustomerSession,
  revokeCustomerSession,
} from "../../services/customer-sessions.js";
import { portalLink } from "../../domain/portal.js";
import { getBranding, updateBranding, type OrganizationBranding as Branding } from "../../services/branding.js";
import "./customer.js";

/**
 * Plaintext keys this request knows (session id -> key): the one createCustomerSession made and
 * the one customerSession(key) was asked for. Only hashes are stored, so no other read has a key.
 */
const knownKeys = new WeakMap<GraphQLContext, Map<string, string>>();
function rememberKey(ctx: GraphQLContext, id: string, key: string): void {
  let keys = knownKeys.get(ctx);
  if (!keys) knownKeys.set(ctx, (keys = new Map()));
  keys.set(id, key);
}

export const CustomerSessionSettings = builder.objectRef<SessionSettings>("CustomerSessionSettings").implement({
  description: "The organization's branding when the session was created (a snapshot), and the return URL.",
  fields: (t) => ({
    businessName: t.exposeString("businessName", {
      nullable: true,
      description:
        "the organization's business name (its name when none is set); " +
        "null only in a settings snapshot stored without it",
    }),
    colorBackground: t.exposeString("colorBackground", {
      nullable: true,
      description: "#rrggbb; null: the portal's default",
    }),
    colorAsset: t.exposeString("colorAsset", { nullable: true, description: "#rrggbb; null: the portal's default" }),
    displayInvoices: t.exposeBoolean("displayInvoices", {
      description: "whether the portal lists the customer's invoices",
    }),
    termsOfServiceUrl: t.exposeString("termsOfServiceUrl", {
      nullable: true,
      description: "http(s) URL of the organization's terms of service the portal links to; null: no link",
    }),
    privacyPolicyUrl: t.exposeString("privacyPolicyUrl", {
      nullable: true,
      description: "http(s) URL of the organization's privacy policy the portal links to; null: no link",
    }),
    returnUrl: t.exposeString("returnUrl", { description: "same as the session's returnUrl" }),
  }),
});

export const CustomerSession = builder.prismaNode("CustomerSession", {
  id: { field: "id", description: "`ses_` id" },
  findUnique: (id, ctx) => activeSessionById(ctx, id),
  nullable: true,
  description:
    "A customer's access to the customer portal, identified by a secret key, until it expires " +
    "(docs/customer-sessions.md). Expired sessions read as null.",
  fields: (t) => ({
    key: t.string({
      nullable: true,
      select: { id: true },
      description:
        "the secret key (`cs_` + 32 base62): only in the result of createCustomerSession and of " +
        "customerSession(key); null elsewhere (only its hash is stored)",
      resolve: (s, _args, ctx) => knownKeys.get(ctx)?.get(s.id) ?? null,
    }),
    url: t.string({
      nullable: true,
      select: { id: true },
      description:
        "the absolute link that opens the customer portal for this session: PUBLIC_URL (else the request's origin), " +
        "then the portal's path and the session key, where the business redirects its customer (as Stripe's " +
        "portal session `url`); " +
        "like `key`, only in the result of createCustomerSession and of customerSession(key), null elsewhere",
      resolve: (s, _args, ctx) => {
        const key = knownKeys.get(ctx)?.get(s.id);
        return key ? portalLink(ctx.baseUrl, key) : null;
      },
    }),
    customer: t.relation("customer", { description: "the customer the portal shows" }),
    testMode: t.exposeBoolean("testMode", { description: "true for a session of test mode (made with a test key)" }),
    returnUrl: t.exposeString("returnUrl", { description: "where the portal sends the customer back" }),
    settings: t.field({
      type: CustomerSessionSettings,
      description:
        "the branding the portal uses, copied when the session was created (later branding changes do not apply)",
      select: { settings: true, returnUrl: true },
      resolve: (s) => storedSessionSettings(s.settings, s.returnUrl),
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was created" }),
    expires: t.expose("expiresAt", {
      type: "DateTime",
      description: "the key stops working at this instant (created + SESSION_TTL_SECONDS)",
    }),
  }),
});

const OrganizationBranding = builder.objectRef<Branding>("OrganizationBranding").implement({
  description:
    "The organization's customer portal branding in the caller's mode; new customer sessions (and the hosted " +
    "checkout) of that mode use it. Test and live mode each have their own (a test key never changes live's; " +
    "docs/decisions.md).",
  fields: (t) => ({
    organization: t.exposeID("id", { description: "`org_` id" }),
    testMode: t.exposeBoolean("testMode", { description: "the mode this branding belongs to: the caller's" }),
    name: t.exposeString("name", {
      description: "the organization's name; sessions use it as business name when businessName is not set",
    }),
    businessName: t.exposeString("businessName", {
      nullable: true,
      description: "name the portal shows (at most 100 characters); null: the organization's name is used",
    }),
    colorBackground: t.exposeString("colorBackground", {
      nullable: true,
      description: "portal background colour, lowercase #rrggbb; null: the portal's default",
    }),
    colorAsset: t.exposeString("colorAsset", {
      nullable: true,
      description: "portal accent colour (buttons, links), lowercase #rrggbb; null: the portal's default",
    }),
    displayInvoices: t.exposeBoolean("displayInvoices", {
      description: "whether the portal lists the customer's invoices",
    }),
    termsOfServiceUrl: t.exposeString("termsOfServiceUrl", {
      nullable: true,
      description: "http(s) URL of the terms of service; null: no link",
    }),
    privacyPolicyUrl: t.exposeString("privacyPolicyUrl", {
      nullable: true,
      description: "http(s) URL of the privacy policy; null: no link",
    }),
    portalCancelSubscriptions: t.exposeBoolean("portalCancelSubscriptions", {
      description:
        "whether customers may cancel their subscriptions at period end in the customer portal (default false; " +
        "read when the customer acts, not copied into sessions)",
    }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "when this mode's branding last changed" }),
  }),
});

const CustomerSessionInput = builder.inputType("CustomerSessionInput", {
  description: "Both fields are required (checked by the service, so errors name the field).",
  fields: (t) => ({
    customer: t.string({ description: "`cus_` id of a customer of this organization and mode" }),
    returnUrl: t.string({ description: `absolute http(s) URL to return to, at most ${URL_MAX_LENGTH} characters` }),
  }),
});

const OrganizationBrandingInput = builder.inputType("OrganizationBrandingInput", {
  description: "Only the given fields change; null or an empty string clears a text field.",
  fields: (t) => ({
    businessName: t.string({ description: "at most 100 characters" }),
    colorBackground: t.string({ description: "#rrggbb or #rgb (stored as lowercase #rrggbb)" }),
    colorAsset: t.string({ description: "#rrggbb or #rgb (stored as lowercase #rrggbb)" }),
    displayInvoices: t.boolean({ description: "whether the portal lists the customer's invoices (not null)" }),
    termsOfServiceUrl: t.string({ description: `absolute http(s) URL, at most ${URL_MAX_LENGTH} characters` }),
    privacyPolicyUrl: t.string({ description: `absolute http(s) URL, at most ${URL_MAX_LENGTH} characters` }),
    portalCancelSubscriptions: t.boolean({
      description: "whether customers may cancel subscriptions at period end in the customer portal (not null)",
    }),
  }),
});

builder.queryFields((t) => ({
  customerSession: t.prismaField({
    type: "CustomerSession",
    nullable: true,
    description:
      "The session with this key in the caller's organization and mode; null when there is none or it has expired.",
    args: {
      key: t.arg.string({ required: true, description: "the session's secret key (`cs_` + 32 base62 characters)" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const session = await ctx.prisma.customerSession.findFirst({
        ...query,
        where: activeSessionByKey(ctx, args.key),
      });
      if (session) rememberKey(ctx, session.id, args.key);
      return session;
    },
  }),
  organizationBranding: t.field({
    type: OrganizationBranding,
    description: "The caller's organization's customer portal branding in the caller's mode.",
    resolve: (_root, _args, ctx) => getBranding(ctx),
  }),
}));

builder.mutationFields((t) => ({
  createCustomerSession: t.prismaField({
    type: "CustomerSession",
    description:
      "Creates a session for a customer; the result carries the key (shown once). Errors: validation_error naming " +
      "the field (customer missing or not a customer of this organization and mode; return_url missing, too long or " +
      "not an absolute http(s) URL).",
    args: {
      input: t.arg({ type: CustomerSessionInput, required: true, description: "the customer and the return URL" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const { session, key } = await createCustomerSession(ctx, args.input);
      rememberKey(ctx, session.id, key);
      return ctx.prisma.customerSession.findUniqueOrThrow({ ...query, where: { id: session.id } });
    },
  }),
  updateOrganizationBranding: t.field({
    ...ADMIN_FIELD,
    type: OrganizationBranding,
    description:
      "Changes the given branding fields of the caller's mode (the other mode's is not touched); later sessions of " +
      "that mode copy them. Errors: validation_error naming the field (business_name blank or over 100 characters; " +
      "color_background or color_asset not #rrggbb/#rgb; display_invoices null; terms_of_service_url or " +
      "privacy_policy_url not an absolute http(s) URL).",
    args: {
      input: t.arg({ type: OrganizationBrandingInput, required: true, description: "the branding fields to change" }),
    },
    resolve: (_root, args, ctx) => updateBranding(ctx, args.input),
  }),
  revokeCustomerSession: t.prismaField({
    type: "CustomerSession",
    description:
      "Ends a live session now: its key no longer opens the customer portal, and the portal credentials it was " +
      "exchanged for stop working at once (docs/customer-portal.md). " +
      "Answers the session as it was just before (a revoked session reads as null afterwards). Errors: not_found " +
      "(unknown, expired, already revoked or another tenant's session).",
    args: { id: t.arg.id({ required: true, description: "`ses_` id of the session" }) },
    resolve: async (query, _root, args, ctx) => {
      const revoked = await revokeCustomerSession(ctx, String(args.id));
      return ctx.prisma.customerSession.findUniqueOrThrow({ ...query, where: { id: revoked.id } });
    },
  }),
}));
