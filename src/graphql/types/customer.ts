/** Customers (spec "Customer"): node type, `customers` connection, create and update mutations. */
import { builder, PORTAL_FIELD } from "../builder.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import DataLoader from "dataloader";
import { createCustomer, updateCustomer } from "../../services/customers.js";
import { customerAggregations, type CustomerAggregations as Aggregations } from "../../services/aggregations.js";
import type { GraphQLContext } from "../context.js";
import "./reference.js";
import "./payment.js";
import "./test-clock.js";
import "./dunning-campaign.js";

interface ContactShape {
  name: string | null;
  email: string | null;
  phone: string | null;
  role: string | null;
}

const Contact = builder.objectRef<ContactShape>("Contact").implement({
  description: "A person to reach at the customer.",
  fields: (t) => ({
    name: t.exposeString("name", { nullable: true, description: "the person's name; null when not given" }),
    email: t.exposeString("email", { nullable: true, description: "e-mail address; null when not given" }),
    phone: t.exposeString("phone", { nullable: true, description: "phone number as entered; null when not given" }),
    role: t.exposeString("role", {
      nullable: true,
      description: "free text, e.g. Accounts payable; null when not given",
    }),
  }),
});

const CustomerAggregations = builder.objectRef<Aggregations>("CustomerAggregations").implement({
  description:
    "Financial summary in `currency` (the customer's currency, else its country's default): docs/decisions.md.",
  fields: (t) => ({
    currency: t.exposeString("currency", {
      nullable: true,
      description:
        "ISO 4217 code of the amounts; null when the customer has neither a currency nor a country with a default one",
    }),
    balance: t.expose("balance", {
      type: "Decimal",
      description: "sales - finalized credit notes - succeeded payments",
    }),
    sales: t.expose("sales", { type: "Decimal", description: "total of finalized invoices" }),
    salesCurrentPeriod: t.expose("salesCurrentPeriod", {
      type: "Decimal",
      description: "sales dated in the current calendar month (organization time zone)",
    }),
  }),
});

/** One aggregation query per request for every customer it shows (no N+1). */
const aggregationLoaders = new WeakMap<GraphQLContext, DataLoader<string, Aggregations>>();
function aggregationsOf(ctx: GraphQLContext, id: string): Promise<Aggregations> {
  let loader = aggregationLoaders.get(ctx);
  if (!loader) aggregationLoaders.set(ctx, (loader = new DataLoader((ids) => customerAggregations(ctx, ids))));
  return loader.load(id);
}

/**
 * The customer's own details, the columns an issued document's snapshot keeps
 * (domain/issued-parties.ts CustomerColumns): the interface `Customer` (the customer now) and
 * `IssuedCustomer` (as a document was issued to it) both implement, so one fragment reads either.
 */
export const CustomerDetails = builder.prismaInterface("Customer", {
  variant: "CustomerDetails",
  description:
    "A customer's own details: what the customer is now (`Customer`) and what a document was issued to " +
    '(`IssuedCustomer`) alike (docs/decisions.md "Issued documents").',
  fields: (t) => ({
    name: t.exposeString("name", {
      nullable: true,
      description: "legal or display name printed on documents (at most 200 characters); null when not given",
    }),
    address: t.exposeString("address", {
      nullable: true,
      description: "postal address printed on documents (at most 500 characters); null when not given",
    }),
    country: t.relation("country", {
      nullable: true,
      description: "Country object (REST prints the id where the spec asks for a string); null when not given",
    }),
    state: t.relation("state", {
      nullable: true,
      description: "State object when the country has seeded states; null otherwise, or when not given",
    }),
    stateCode: t.exposeString("stateCode", {
      nullable: true,
      description: "state code (at most six characters), e.g. RM; null when not given",
    }),
    currency: t.exposeString("currencyId", {
      nullable: true,
      description:
        "ISO 4217 code of the customer's currency (e.g. CLP), a code of `currencies`; null: its country's " +
        "default applies",
    }),
    email: t.exposeString("email", {
      nullable: true,
      description: "billing e-mail; documents and reminders go there; null when not given",
    }),
    phone: t.exposeString("phone", {
      nullable: true,
      description: "phone number as entered (at most 40 characters); null when not given",
    }),
    website: t.exposeString("website", { nullable: true, description: "http(s) URL; null when not given" }),
    taxId: t.exposeString("taxId", {
      nullable: true,
      description: "tax id; for Chile a RUT normalized as 76042235-5; null when not given",
    }),
    activity: t.exposeString("activity", {
      nullable: true,
      description:
        "the customer's giro (line of business, at most 40 characters): SII's GiroRecep on its DTEs and `Giro` on " +
        "printed documents; null when not given",
    }),
    commune: t.exposeString("commune", {
      nullable: true,
      description:
        "comuna of the address: for a Chilean customer one of Chile's comunas by its official name (SII's " +
        "CmnaRecep); null when not given",
    }),
    city: t.exposeString("city", {
      nullable: true,
      description:
        "city of the address (SII's CiudadRecep; at most 20 characters for a Chilean customer); null when not given",
    }),
    contacts: t.field({
      type: [Contact],
      select: { contacts: true },
      description: "people to reach at the customer, in the order given; empty when none",
      resolve: (c) => (c.contacts as unknown as ContactShape[]) ?? [],
    }),
    taxSettings: t.expose("taxSettings", {
      type: "JSONObject",
      description:
        "tax details stored as given; {} when none. A customer saved before `activity`, `commune` and `city` existed " +
        "may hold them here under those keys: DTEs and printed documents read the field first, then the key",
    }),
    metadata: t.expose("metadata", {
      type: "JSONObject",
      description: "the organization's own string keys and values; {} when none",
    }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was created" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "when it last changed" }),
  }),
});

export const Customer = builder.prismaNode("Customer", {
  interfaces: [CustomerDetails],
  id: { field: "id", description: "`cus_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "Someone the organization bills.",
  fields: (t) => ({
    testMode: t.exposeBoolean("testMode", {
      description: "true for a customer of test mode (made with a test key); test and live data never mix",
    }),
    aggregations: t.field({
      type: CustomerAggregations,
      select: { id: true },
      description:
        "the customer's balance and sales (computed when asked, one query for every customer of the response)",
      resolve: (c, _args, ctx) => aggregationsOf(ctx, c.id),
    }),
    sources: t.relation("sources", {
      description: "payment sources attached to the customer (detachSource removes one), oldest first",
      query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
    }),
    testClock: t.relation("testClock", {
      nullable: true,
      description: "test clock whose frozen time the customer lives on (test mode only); null: the wall clock",
    }),
    // the organization's collection policy: API keys only (a portal credential gets permission_denied)
    dunningCampaign: t.relation("dunningCampaign", {
      nullable: true,
      authScopes: { apiKey: true },
      description:
        "the dunning campaign that recovers the customer's overdue invoices; null: the organization's default " +
        "campaign (the one appliedToOrganization), if any (API keys only)",
    }),
    excludeFromDunning: t.exposeBoolean("excludeFromDunning", {
      authScopes: { apiKey: true },
      description: "true: no dunning campaign acts on the customer, the default included (API keys only)",
    }),
  }),
});

/**
 * The customer as an invoice, order or credit note was issued to it (`issuedCustomer` of each):
 * services/issued-parties.ts `documentCustomer` gives the Customer row with the snapshot's columns
 * once the document is finalized, the row itself on a draft. No `id`: a normalized client cache
 * keeps it inside its document, apart from the live `Customer` of the same id (docs/decisions.md
 * "Issued documents").
 */
export const IssuedCustomer = builder.prismaObject("Customer", {
  variant: "IssuedCustomer",
  interfaces: [CustomerDetails],
  description:
    "The customer as a document (invoice, order, credit note) was issued to it. On a finalized document every field " +
    "is the customer's as it stood when the document was finalized, stored then and never changed afterwards, " +
    "whatever happens to the customer (what the document's PDF and DTE print; `created` and `updated` are the " +
    "customer record's times then; `activity`, `commune` and `city` are null on a document issued before customers " +
    "had them, and its printed document reads those keys of `taxSettings`). On a draft: the customer now. It has no " +
    "`id`: it belongs to its document (a normalized cache such as Relay's or Apollo's keeps it inside the document, " +
    "never merged with the `Customer`); the customer as it is now, with its id, is the document's `customer` " +
    '(docs/decisions.md "Issued documents").',
});

const ContactInput = builder.inputType("ContactInput", {
  description: "A person to reach at the customer; every field optional. Errors name `contacts.<i>.<field>`.",
  fields: (t) => ({
    name: t.string({ description: "the person's name" }),
    email: t.string({ description: "an e-mail address (else a validation_error on contacts.<i>.email)" }),
    phone: t.string({ description: "phone number, free text" }),
    role: t.string({ description: "free text, e.g. Accounts payable" }),
  }),
});

const CustomerInput = builder.inputType("CustomerInput", {
  description:
    "Customer fields. On update only the given fields change; metadata merges (an empty value removes a key).",
  fields: (t) => ({
    name: t.string({ description: "legal or display name, at most 200 characters" }),
    address: t.string({ description: "postal address, at most 500 characters" }),
    country: t.string({ description: "two-letter ISO 3166-1 code of a known country" }),
    state: t.string({ description: "state code, at most six characters (RM or CL-RM)" }),
    currency: t.string({ description: "ISO 4217 code" }),
    email: t.string({ description: "billing e-mail address" }),
    phone: t.string({ description: "phone number, at most 40 characters" }),
    website: t.string({ description: "http(s) URL" }),
    taxId: t.string({
      description:
        "tax id, at most 40 characters; for Chilean customers a valid RUT in any form (76.042.235-5), stored as " +
        "76042235-5",
    }),
    activity: t.string({
      description: "giro (SII's GiroRecep), at most 40 characters (else a validation_error on activity)",
    }),
    commune: t.string({
      description:
        "comuna; for a Chilean customer one of Chile's comunas in any case, with or without accents (stored by its " +
        "official name, e.g. nunoa → Ñuñoa), else a validation_error on commune; other customers: free text, at most " +
        "100 characters",
    }),
    city: t.string({
      description: "city; at most 20 characters for a Chilean customer (SII's CiudadRecep), 100 for others",
    }),
    contacts: t.field({ type: [ContactInput], description: "replaces the whole list of contacts" }),
    taxSettings: t.field({ type: "JSONObject", description: "replaces the stored tax settings" }),
    metadata: t.field({
      type: "JSONObject",
      description: "string keys and values, merged into the current metadata (an empty value removes a key)",
    }),
    testClock: t.string({
      description: "`clk_` id of a test clock to attach the customer to: test mode only, at creation only",
    }),
    dunningCampaign: t.string({
      description:
        "`dun_` id of a dunning campaign of this organization and mode (else a validation_error on " +
        "dunning_campaign); null or empty: the organization's default campaign",
    }),
    excludeFromDunning: t.boolean({
      description: "true: no dunning campaign acts on the customer, the default included (default false)",
    }),
  }),
});

const CustomerWhere = builder.inputType("CustomerWhere", {
  description: "Customer list filters (spec: country, email, name, sources, tax_id, created; plus country name).",
  fields: (t) => ({
    country: t.field({ type: StringFilter, description: "country id" }),
    countryName: t.field({ type: StringFilter, description: "country name (Spanish or English)" }),
    email: t.field({ type: StringFilter, description: "billing e-mail" }),
    name: t.field({ type: StringFilter, description: "the customer's name" }),
    taxId: t.field({ type: StringFilter, description: "tax id as stored (a RUT as 76042235-5)" }),
    sources: t.field({ type: StringFilter, description: "customers with a source whose id matches" }),
    created: t.field({ type: DateTimeFilter, description: "creation instant" }),
  }),
});

builder.queryFields((t) => ({
  customers: t.connection(
    {
      type: Customer,
      description: "Customers of the caller's organization and mode, newest first.",
      args: {
        where: t.arg({ type: CustomerWhere, description: "filters (all must match); absent: every customer" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        const countryName = stringConditions("name", w.countryName).map((c) => ({ country: { is: c } }));
        const countryNameEn = stringConditions("nameEn", w.countryName).map((c) => ({ country: { is: c } }));
        return tenantConnection(ctx, info, ctx.prisma.customer, args, [
          ...stringConditions("countryId", w.country, { uppercase: true }),
          ...stringConditions("email", w.email),
          ...stringConditions("name", w.name),
          ...stringConditions("taxId", w.taxId),
          ...dateTimeConditions("createdAt", w.created),
          ...stringConditions("id", w.sources).map((c) => ({ sources: { some: c } })),
          ...(countryName.length ? [{ OR: [{ AND: countryName }, { AND: countryNameEn }] }] : []),
        ]);
      },
    },
    { description: "A page of customers, newest first." },
    { description: "A customer in a page of customers, with its cursor." },
  ),
}));

builder.mutationFields((t) => ({
  createCustomer: t.prismaField({
    type: "Customer",
    description:
      "Creates a customer. Errors: validation_error with the fields in extensions.fields (a text over its length; " +
      "email or contacts.<i>.email not an e-mail; website not http(s); country not a known two-letter code; state " +
      "not one of the country's; currency unknown; tax_id not a valid RUT for a Chilean customer; activity over 40 " +
      "characters; commune not one of Chile's comunas for a Chilean customer; city over its length; test_clock " +
      "unknown or used in live mode; dunning_campaign not a campaign of this organization and mode).",
    args: {
      input: t.arg({ type: CustomerInput, required: true, description: "the customer's fields; every one optional" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const created = await createCustomer(ctx, args.input);
      return ctx.prisma.customer.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  updateCustomer: t.prismaField({
    ...PORTAL_FIELD,
    type: "Customer",
    description:
      "Updates the given fields of a customer. Customer portal: its own customer only, and only email and address " +
      "(another field is a validation_error naming it). Errors: not_found (no such customer in this organization " +
      "and mode), validation_error naming the field (as createCustomer; test_clock cannot change after creation).",
    args: {
      id: t.arg.id({ required: true, description: "`cus_` id of the customer" }),
      input: t.arg({
        type: CustomerInput,
        required: true,
        description: "the fields to change; absent ones keep their value, null or an empty string clears a text field",
      }),
    },
    resolve: async (query, _root, args, ctx) => {
      const updated = await updateCustomer(ctx, String(args.id), args.input);
      return ctx.prisma.customer.findUniqueOrThrow({ ...query, where: { id: updated.id } });
    },
  }),
}));
