/**
 * GraphQL results -> the spec's REST JSON (docs/rest.md "Formats"), by one rule for every
 * resource: each selected field under its snake_case name, `Decimal` as an exact JSON number,
 * `DateTime` as `yyyy-mm-dd hh:mm:ss` (UTC) in invoices, payments and embedded customers and ISO
 * 8601 with offset elsewhere, `Date` as is, enums by their REST values, an object that selects only
 * its `id` as that id. Only the spec's exceptions are written out (`EXCEPTIONS`), and openapi.ts
 * derives the document's schemas from the same rule and the same table. Pure reshaping: no rule lives here.
 */
import {
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from "graphql";
import { schema as graphqlSchema } from "../graphql/schema.js";
import { restEnumValue } from "./enums.js";
import { num } from "./json.js";
import type { PrintContext } from "./types.js";

type Json = Record<string, unknown>;
type Node = Record<string, unknown>;

/** camelCase -> snake_case (`taxPercent` -> `tax_percent`). */
export const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** ISO 8601 -> `yyyy-mm-dd hh:mm:ss` in UTC. */
export function plainTimestamp(iso: string | null | undefined): string | null {
  if (!iso) return null;
  return new Date(iso).toISOString().slice(0, 19).replace("T", " ");
}

/** ISO 8601 with an explicit offset (`2026-11-22T10:00:00.000+00:00`). */
export function isoTimestamp(iso: string | null | undefined): string | null {
  if (!iso) return null;
  return new Date(iso).toISOString().replace("Z", "+00:00");
}

/** Where a value is printed: the route's context, and whether it is the resource itself or embedded in one. */
interface Where {
  how: PrintContext;
  root: boolean;
}

/**
 * One field printed otherwise than by the rule: `schema` is its JSON Schema in the OpenAPI
 * document (openapi.ts), `print` its printed entries (none: left out) given the field's GraphQL
 * value, the object holding it and the printer of a value by the rule.
 */
interface Exception {
  schema?: Json;
  /** the GraphQL field is printed under another name only (its own name is not in the answer's schema) */
  renamed?: true;
  print?: (value: unknown, node: Node, rule: (field: string) => unknown, where: Where) => [string, unknown][];
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const CURRENCY_OBJECT = { anyOf: [ref("Currency"), { type: "string" }, { type: "null" }] };
const ID_OR_OBJECT = { anyOf: [{ type: "string" }, { type: "object" }, { type: "null" }] };
/** A customer's `country`/`state` as objects on retrieve and list, as codes on create and update (spec "Customer"). */
const customerRead = (where: Where) => where.root && (where.how.shape === "retrieve" || where.how.shape === "list");
/** A document's `currency` printed inside its `document` (an id on invoices, the object on orders, by the rule). */
const DOCUMENT: Record<string, Exception> = {
  document: {
    schema: ID_OR_OBJECT,
    print: (_v, node, rule) => [["document", { ...(rule("document") as Json), currency: rule("currency") }]],
  },
  currency: { schema: CURRENCY_OBJECT, print: () => [] },
};
/** An addon rate is `{cycle, percent}` or `{cycle, amount}` (spec "Addon"). */
const RATE = (field: "percent" | "amount"): Exception => ({
  print: (v, node, rule) => ((field === "percent" ? v !== null : node.percent === null) ? [[field, rule(field)]] : []),
});

/**
 * The printed exceptions to the rule, by GraphQL type and field (docs/rest.md "Responses"): a
 * customer's `country`/`state`, a document's `currency` in its `document`, a credit note's
 * `invoice` (an id, or the object with `?expand=invoice`, by the rule) and `voids` printed as
 * `credit_note`, the spec's `is_purshase`
 * and `recipient`, addon rates, a usage's `transaction_id` only when recorded, a swap's
 * `purchases` as ids with its `verification` array.
 */
export const EXCEPTIONS: Record<string, Record<string, Exception>> = {
  Customer: {
    country: {
      schema: ID_OR_OBJECT,
      print: (v, _node, rule, where) => [
        ["country", customerRead(where) ? rule("country") : ((v as Node)?.id ?? null)],
      ],
    },
    state: {
      schema: ID_OR_OBJECT,
      print: (v, node, rule, where) => [
        [
          "state",
          !customerRead(where)
            ? node.stateCode
            : v
              ? rule("state")
              : node.stateCode
                ? { id: null, code: node.stateCode, name: null }
                : null,
        ],
      ],
    },
    // the embedded customer's `state` is its code
    stateCode: { print: (v, node) => ("state" in node ? [] : [["state", v]]) },
  },
  DocumentType: {
    is_purshase: { schema: { type: "boolean", description: "the spec's spelling of is_purchase" } },
    isPurchase: { renamed: true, print: (v) => [["is_purshase", v]] },
  },
  Invoice: DOCUMENT,
  Order: DOCUMENT,
  CreditNote: {
    invoice: { schema: ID_OR_OBJECT },
    document: { schema: ID_OR_OBJECT },
    currency: { schema: CURRENCY_OBJECT },
    // the spec's body names the voided credit note `credit_note`; the answer prints it under that name
    credit_note: {
      schema: { type: ["string", "null"], description: "on a debit note voiding a credit note: the credit note's id" },
    },
    voids: { renamed: true, print: (v) => [["credit_note", (v as Node | null)?.id ?? null]] },
  },
  Addon: { rates: { schema: { type: ["array", "object", "null"] } } },
  AddonRate: { percent: RATE("percent"), amount: RATE("amount") },
  Plan: { currency: { schema: CURRENCY_OBJECT }, frequency: { schema: ID_OR_OBJECT } },
  Product: { plans: { schema: { type: ["array", "null"] } } },
  Payment: { currency: { schema: CURRENCY_OBJECT }, source: { schema: ID_OR_OBJECT } },
  Reminder: {
    recipient: { schema: { type: "array", items: { type: "string" }, description: "the e-mail addresses" } },
    recipients: { renamed: true, print: (v) => [["recipient", v]] },
  },
  Usage: { transactionId: { print: (v) => (v === null || v === undefined ? [] : [["transaction_id", v]]) } },
  // the time the change was requested, as GraphQL gives it
  SubscriptionPendingChanges: { requested: { print: (v) => [["requested", v]] } },
  Swap: {
    purchases: {
      schema: { type: "array", items: { type: "string" }, description: "ids of the purchase documents" },
      print: (v) => {
        const purchases = v as Node[];
        const verification = purchases.map((p) => ({
          purchase: p.id,
          document_type: p.documentType,
          folio: p.folio,
          issuer_tax_id: p.issuerTaxId,
          signature_valid: p.signatureValid,
          ted_valid: p.tedValid,
          reason: p.verificationReason,
        }));
        return [
          ["purchases", purchases.map((p) => p.id)],
          ["verification", verification],
        ];
      },
    },
    verification: {
      schema: {
        type: "array",
        items: {
          type: "object",
          properties: Object.fromEntries(
            ["purchase", "document_type", "folio", "issuer_tax_id", "signature_valid", "ted_valid", "reason"].map(
              (name) => [name, {}],
            ),
          ),
        },
      },
    },
  },
};

/** Timestamps `yyyy-mm-dd hh:mm:ss` in these types (the spec's invoice, payment and embedded customer). */
const plainTimestamps = (type: string, root: boolean) =>
  type === "Invoice" || type === "Payment" || (type === "Customer" && !root);

function printValue(type: GraphQLOutputType, value: unknown, where: Where, plain: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (isNonNullType(type)) return printValue(type.ofType, value, where, plain);
  if (isListType(type)) return (value as unknown[]).map((v) => printValue(type.ofType, v, where, plain));
  if (isScalarType(type)) {
    if (type.name === "Decimal") return num(value as string);
    if (type.name === "DateTime") return plain ? plainTimestamp(value as string) : isoTimestamp(value as string);
    return value;
  }
  if (isEnumType(type)) return restEnumValue(type.name, value as string);
  const node = value as Node;
  const keys = Object.keys(node).filter((k) => k !== "__typename");
  if (keys.length === 1 && keys[0] === "id") return node.id;
  const object = isAbstractType(type) ? graphqlSchema.getType(node.__typename as string) : type;
  return isObjectType(object) ? printObject(object, node, { how: where.how, root: false }) : node;
}

function printObject(type: GraphQLObjectType, node: Node, where: Where): Json {
  const fields = type.getFields();
  const exceptions = EXCEPTIONS[type.name] ?? {};
  const plain = plainTimestamps(type.name, where.root);
  const rule = (key: string) => (fields[key] ? printValue(fields[key].type, node[key], where, plain) : node[key]);
  const printed: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "__typename") continue;
    const exception = exceptions[key]?.print;
    if (exception) for (const [name, v] of exception(value, node, rule, where)) printed[name] = v;
    else printed[snake(key)] = rule(key);
  }
  return printed;
}

/** A GraphQL result of type `typename` (the resource's fragment) as the spec's JSON, by the rule and `EXCEPTIONS`. */
export function printNode(
  typename: string,
  node: unknown,
  how: PrintContext = { shape: "special", expand: new Set() },
) {
  const type = graphqlSchema.getType(typename);
  if (!isObjectType(type)) throw new Error(`${typename} is not an object type of the schema`);
  return printObject(type, node as Node, { how, root: true });
}
