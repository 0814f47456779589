/**
 * GraphQL enums shared by several resources (docs/graphql.md "Enums"). A value's GraphQL name is the
 * spec's string wherever that string is a GraphQL name, so JSON answers read as before; the REST
 * surface keeps the spec's strings through src/rest/enums.ts. Enums of one resource live with it
 * in ./types/<resource>.ts.
 */
import { builder } from "./builder.js";
import { enumFilter } from "./filters.js";

/** Re-exported for the type modules: defined in ./builder.ts, which the enums import. */
export type { DescribedValues } from "./builder.js";

/** Internal (stored) discount schemes: `%` percent, `$` amount in the document's currency. */
export type DiscountSchemeValue = "%" | "$";

export const DiscountScheme = builder.enumType("DiscountScheme", {
  description:
    'How a discount\'s amount reads (spec "Discounts"). REST writes these as `%` and `$`; GraphQL names them, since ' +
    "`%` and `$` are not GraphQL names.",
  values: {
    percent: { value: "%", description: "the amount is a percent of the line or document (0-100); REST `%`" },
    amount: { value: "$", description: "the amount is money in the document's currency; REST `$`" },
  } as const,
});

export const DiscountSchemeFilter = enumFilter(DiscountScheme, "DiscountScheme");

/** Catalogue entries (products, plans, addons, coupons) are active or archived (docs/catalogue.md). */
export const CatalogueStatus = builder.enumType("CatalogueStatus", {
  description:
    "Whether a catalogue entry (product, plan, addon, coupon) can be used on new documents and subscriptions " +
    "(docs/catalogue.md).",
  values: {
    active: { value: "active", description: "usable on new documents and subscriptions" },
    archived: {
      value: "archived",
      description: "kept for what already uses it; refused on new documents and subscriptions (validation_error)",
    },
  } as const,
});

export const CatalogueStatusFilter = enumFilter(CatalogueStatus, "CatalogueStatus");

/** The languages the service writes in: printed documents and the customer portal. */
export const Language = builder.enumType("Language", {
  description:
    'A language the service writes in: printed documents (docs/sii-dte.md "The printed representation") and the ' +
    "customer portal (docs/customer-portal.md). REST writes the same strings.",
  values: {
    es: { value: "es", description: "Spanish (SII's labels on Chilean documents)" },
    en: { value: "en", description: "English" },
  } as const,
});

/** The three kinds of issued document (spec "Invoices", "Orders", "Credit notes"). */
export const DocumentKind = builder.enumType("DocumentKind", {
  description:
    "Which kind of document a reference names: an invoice (`inv_` id), an order or dispatch guide (`ord_`) or a " +
    "credit or debit note (`cre_`).",
  values: {
    invoice: { value: "invoice", description: "an invoice (`inv_` id)" },
    order: { value: "order", description: "an order, a dispatch guide in Chile (`ord_` id)" },
    credit_note: { value: "credit_note", description: "a credit or debit note (`cre_` id)" },
  } as const,
});
