/**
 * Reference lists (spec "Document type", "Currency", "State"; countries embed in customers):
 * global, read-only, seeded by migration. Lists are Relay connections with filters.
 */
import { builder } from "../builder.js";
import { StringFilter, stringConditions } from "../filters.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { noteEffect } from "../../domain/credit-notes.js";

export const Country = builder.prismaObject("Country", {
  description: "A country (ISO 3166-1 alpha-2 id) with its default sales tax.",
  fields: (t) => ({
    id: t.exposeString("id", { description: "ISO 3166-1 alpha-2 code, e.g. CL" }),
    name: t.exposeString("name", { description: "name in Spanish" }),
    nameEn: t.exposeString("nameEn", { description: "name in English" }),
    phoneCode: t.exposeString("phoneCode", { description: "international dialing prefix, e.g. +56" }),
    hasRegulation: t.exposeBoolean("hasRegulation", {
      description: "electronic tax documents are regulated by a tax agency",
    }),
    taxPercent: t.expose("taxPercent", { type: "Decimal", description: "default VAT in percent (19 for CL)" }),
  }),
});

export const Currency = builder.prismaObject("Currency", {
  description: "A currency (ISO 4217 id). `rounded` currencies use whole units (CLP).",
  fields: (t) => ({
    id: t.exposeString("id", { description: "ISO 4217 code" }),
    conversion: t.exposeString("conversionId", {
      nullable: true,
      description:
        "ISO 4217 code of the currency its amounts are converted into when charged (CLF -> CLP); null when none",
    }),
    country: t.exposeString("countryId", {
      nullable: true,
      description:
        "ISO 3166-1 alpha-2 code of its country (a `countries` id); null for a currency of no single country",
    }),
    default: t.exposeBoolean("isDefault", { description: "primary currency of its country" }),
    isChargeable: t.exposeBoolean("isChargeable", { description: "a payment gateway can charge it" }),
    available: t.exposeBoolean("available", {
      description: "the currency is offered (true for every currency the service ships)",
    }),
    name: t.exposeString("name", { description: "name in Spanish" }),
    nameEn: t.exposeString("nameEn", { description: "name in English" }),
    rounded: t.exposeBoolean("rounded", { description: "amounts round to whole units" }),
    decimals: t.exposeInt("decimals", { description: "ISO 4217 minor unit (decimal places) used when not rounded" }),
  }),
});

export const State = builder.prismaObject("State", {
  description: "A first-level subdivision (Chile: region), id ISO 3166-2 (CL-RM).",
  fields: (t) => ({
    id: t.exposeString("id", { description: "ISO 3166-2 code, e.g. CL-RM" }),
    code: t.exposeString("code", { description: "code within the country, e.g. RM" }),
    country: t.exposeString("countryId", {
      description: "ISO 3166-1 alpha-2 code of its country (a `countries` id), e.g. CL",
    }),
    name: t.exposeString("name", { description: "the state's name (Chile: the region's)" }),
  }),
});

export const DocumentType = builder.prismaObject("DocumentType", {
  description:
    "A kind of tax document; id = country + code (CL33 = Factura electrónica). docs/reference-data.md explains " +
    "each flag.",
  fields: (t) => ({
    id: t.exposeString("id", { description: "country + SII code, e.g. CL33; what documents' `document` takes" }),
    currency: t.relation("currency", { description: "default currency of documents of this type" }),
    tax: t.expose("tax", { type: "Decimal", description: "tax percent applied (19 for CL33, 0 for exempt types)" }),
    code: t.exposeInt("code", { description: "tax agency code (SII TipoDTE)" }),
    name: t.exposeString("name", { description: "name in Spanish, e.g. Factura electrónica" }),
    hasTaxes: t.exposeBoolean("hasTaxes", { description: "lines are taxed (false: every line is exempt)" }),
    hasTaxesDetail: t.exposeBoolean("hasTaxesDetail", { description: "tax is printed apart from the net amount" }),
    hasLinesTotal: t.exposeBoolean("hasLinesTotal", { description: "lines carry a total" }),
    hasLocalFormat: t.exposeBoolean("hasLocalFormat", { description: "finalize produces a tax-agency file (DTE XML)" }),
    holdTaxes: t.exposeBoolean("holdTaxes", { description: "tax is withheld by the issuer (CL46)" }),
    isForeign: t.exposeBoolean("isForeign", { description: "export document" }),
    isSale: t.exposeBoolean("isSale", {
      description: "a sales document of the issuer (invoices, boletas, notes, exports)",
    }),
    isPurchase: t.exposeBoolean("isPurchase", { description: "REST spells it is_purshase" }),
    isOrder: t.exposeBoolean("isOrder", { description: "dispatch guide" }),
    isNote: t.exposeBoolean("isNote", { description: "credit or debit note" }),
    isCreditNote: t.exposeBoolean("isCreditNote", {
      description: "credit note (61, 112): lowers what the invoice's customer owes",
    }),
    isDebitNote: t.boolean({
      description:
        "debit note (56, 111): raises what the invoice's customer owes. createCreditNote accepts credit and debit " +
        "note types",
      select: { isNote: true, isCreditNote: true },
      resolve: (type) => noteEffect(type) === "debit",
    }),
    pricesIncludeTax: t.exposeBoolean("pricesIncludeTax", { description: "line prices include tax (boletas 39, 41)" }),
    send: t.exposeBoolean("send", { description: "sent to the tax agency" }),
    given: t.exposeBoolean("given", { description: "has an assignable (cedible) copy" }),
    country: t.exposeString("countryId", {
      description: "ISO 3166-1 alpha-2 code of its country (a `countries` id), e.g. CL",
    }),
  }),
});

builder.queryFields((t) => ({
  currencies: t.connection(
    {
      type: Currency,
      description: "Currencies, ordered by id.",
      args: {
        country: t.arg({
          type: StringFilter,
          description: "ISO 3166-1 alpha-2 code of the currency's country (case-insensitive)",
        }),
        name: t.arg({ type: StringFilter, description: "Spanish name" }),
        id: t.arg({ type: StringFilter, description: "ISO 4217 code (case-insensitive)" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const where = {
          AND: [
            ...stringConditions("countryId", args.country, { uppercase: true }),
            ...stringConditions("name", args.name),
            ...stringConditions("id", args.id, { uppercase: true }),
          ],
        };
        return prismaConnection(ctx, info, ctx.prisma.currency, args, { where, orderBy: { id: "asc" } });
      },
    },
    { description: "A page of currencies, by ISO 4217 code." },
    { description: "A currency in a page of currencies, with its cursor." },
  ),
  states: t.connection(
    {
      type: State,
      description: "States (regions), ordered by country and id.",
      args: {
        country: t.arg({
          type: StringFilter,
          description: "ISO 3166-1 alpha-2 code of the state's country (case-insensitive)",
        }),
        name: t.arg({ type: StringFilter, description: "the state's name" }),
        code: t.arg({ type: StringFilter, description: "code within the country, e.g. RM (case-insensitive)" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const where = {
          AND: [
            ...stringConditions("countryId", args.country, { uppercase: true }),
            ...stringConditions("name", args.name),
            ...stringConditions("code", args.code, { uppercase: true }),
          ],
        };
        return prismaConnection(ctx, info, ctx.prisma.state, args, {
          where,
          orderBy: [{ countryId: "asc" }, { id: "asc" }],
        });
      },
    },
    { description: "A page of states, by country and ISO 3166-2 id." },
    { description: "A state in a page of states, with its cursor." },
  ),
}));

// document types and countries
builder.queryFields((t) => ({
  documentTypes: t.connection(
    {
      type: DocumentType,
      description: "Document types, ordered by country and code.",
      args: {
        country: t.arg({
          type: StringFilter,
          description: "ISO 3166-1 alpha-2 code of the type's country (case-insensitive)",
        }),
        name: t.arg({ type: StringFilter, description: "Spanish name" }),
        id: t.arg({ type: StringFilter, description: "type id such as CL33 (case-insensitive)" }),
        isSale: t.arg.boolean({ description: "only sales types (true) or only the others (false); REST is_sale" }),
        isPurchase: t.arg.boolean({
          description: "only purchase types (true) or only the others (false); REST is_purshase",
        }),
        isOrder: t.arg.boolean({ description: "only order types (true) or only the others (false); REST is_order" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const flags: Record<string, boolean>[] = [];
        for (const flag of ["isSale", "isPurchase", "isOrder"] as const)
          if (args[flag] != null) flags.push({ [flag]: args[flag]! });
        const where = {
          AND: [
            ...stringConditions("countryId", args.country, { uppercase: true }),
            ...stringConditions("name", args.name),
            ...stringConditions("id", args.id, { uppercase: true }),
            ...flags,
          ],
        };
        return prismaConnection(ctx, info, ctx.prisma.documentType, args, {
          where,
          orderBy: [{ countryId: "asc" }, { code: "asc" }],
        });
      },
    },
    { description: "A page of document types, by country and SII code." },
    { description: "A document type in a page of document types, with its cursor." },
  ),
  countries: t.connection(
    {
      type: Country,
      description: "Countries, ordered by id.",
      args: {
        name: t.arg({ type: StringFilter, description: "Spanish name" }),
        id: t.arg({ type: StringFilter, description: "ISO 3166-1 alpha-2 code (case-insensitive)" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const where = {
          AND: [...stringConditions("name", args.name), ...stringConditions("id", args.id, { uppercase: true })],
        };
        return prismaConnection(ctx, info, ctx.prisma.country, args, { where, orderBy: { id: "asc" } });
      },
    },
    { description: "A page of countries, by ISO 3166-1 code." },
    { description: "A country in a page of countries, with its cursor." },
  ),
}));
