/**
 * GraphQL results -> the spec's REST JSON (docs/rest.md "Formats"), by one rule for every
 * resource: each selected field under its snake_case name, `Decimal` as an exact JSON number,
 * `DateTime` as `yyyy-mm-dd hh:mm:ss` (UTC) in invoices, payments and embedded customers and ISO
 * 8601 with offset elsewhere, `Date` as is, enums by their REST values, an object that selects only
 * its `id` as that id. Only the spec's exceptions are written out (`EXCEPTIONS`), and openapi.ts
 * derives the document's schemas from the same rule and the same table. Pure reshaping: no rule lives here.
 */
import {
  getOperationAST,
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type SelectionNode,
  type SelectionSetNode,
} from "graphql";
import * as ops from "../graphql/generated/operations.js";
import { schema as graphqlSchema } from "../graphql/schema.js";
import { restEnumValue } from "./enums.js";
import { num, rawJson } from "./json.js";
import type { Operation, OperationName, PrintContext } from "./types.js";

type Json = Record<string, unknown>;
type Node = Record<string, unknown>;

/** camelCase -> snake_case (`taxPercent` -> `tax_percent`). */
export const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

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
  print?: (value: unknown, node: Node, rule: (field: string) => unknown, where: Where) => [string, unknown][];
  /**
   * Another field of the same object whose selected fields this (object) field prints with, as one
   * object of this field's type: its `id`, then the other field's fields, then its own others; the
   * other field is not printed (`printedFields`: nor in the OpenAPI schema or a body).
   */
  merge?: string;
  /** The OpenAPI description of the field, where its GraphQL description does not say what REST prints. */
  description?: string;
  /**
   * The answer may leave the key out (`print` returns nothing for some values): the OpenAPI schema declares it but
   * does not list it in `required`, where every other printed key is (openapi.ts `objectSchema`).
   */
  optional?: true;
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
  currency: { schema: CURRENCY_OBJECT, print: () => [], optional: true },
};
/**
 * A document's embedded `customer`: the customer's id (and what the fragment selects of it now, an
 * order's `aggregations`) with the fields the document was issued with (`issuedCustomer`), as one
 * customer (docs/decisions.md "Issued documents").
 */
const ISSUED_CUSTOMER: Record<string, Exception> = {
  customer: {
    merge: "issuedCustomer",
    description:
      "The customer: on a finalized document as it was issued (its fields as stored at finalize: name, tax id, " +
      "address, state, country, e-mail, phone, website, tax settings, metadata, contacts, timestamps; aggregations " +
      "and sources are the customer's now), on a draft the customer now: an issued document never changes.",
  },
};
/** An addon rate is `{cycle, percent}` or `{cycle, amount}` (spec "Addon"). */
const RATE = (field: "percent" | "amount"): Exception => ({
  optional: true,
  print: (v, node, rule) => ((field === "percent" ? v !== null : node.percent === null) ? [[field, rule(field)]] : []),
});

/**
 * Fields whose REST name is not their snake_case name (the spec's spellings), by the GraphQL type of
 * the resource: its output fields, the fields of its input and of its list's filters alike.
 */
const RENAMES: Record<string, Record<string, string>> = {
  Caf: { documentType: "document" },
  CreditNote: { voids: "credit_note" }, // the spec's body names the voided credit note `credit_note`
  Customer: { countryName: "country__name" }, // a filter, the country's name
  DocumentType: { isPurchase: "is_purshase" },
  Reminder: { recipients: "recipient" },
};

/** The REST name of field `field` of (or mapped to) GraphQL type `type`: its snake_case name unless renamed. */
export const restName = (type: string | undefined, field: string) =>
  (type !== undefined && Object.hasOwn(RENAMES, type) ? RENAMES[type][field] : undefined) ?? snake(field);

/** The REST names of renamed fields by their snake_case GraphQL names (error paths of GraphQL inputs). */
export const REST_PATH_NAMES: Record<string, string> = Object.fromEntries(
  Object.values(RENAMES).flatMap((fields) => Object.entries(fields).map(([field, rest]) => [snake(field), rest])),
);

/**
 * The printed exceptions to the rule, by GraphQL type and field (docs/rest.md "Responses"): a
 * customer's `country`/`state`, a document's `currency` in its `document` and its `customer` (the
 * live customer's id with the issued customer's fields), a credit note's `invoice` (an id, or the
 * object with `?expand=invoice`, by the rule), addon rates, a usage's `transaction_id` only when
 * recorded.
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
      print: (v, node, rule, where) => {
        const code = node.stateCode;
        if (!customerRead(where)) return [["state", code]];
        return [["state", v ? rule("state") : code ? { id: null, code, name: null } : null]];
      },
    },
    // the embedded customer's `state` is its code
    stateCode: { print: (v, node) => ("state" in node ? [] : [["state", v]]), optional: true },
  },
  Invoice: { ...DOCUMENT, ...ISSUED_CUSTOMER },
  Order: { ...DOCUMENT, ...ISSUED_CUSTOMER },
  CreditNote: {
    invoice: { schema: ID_OR_OBJECT },
    document: { schema: ID_OR_OBJECT },
    currency: { schema: CURRENCY_OBJECT },
  },
  Addon: { rates: { schema: { type: ["array", "object", "null"] } } },
  AddonRate: { percent: RATE("percent"), amount: RATE("amount") },
  Plan: { currency: { schema: CURRENCY_OBJECT }, frequency: { schema: ID_OR_OBJECT } },
  Product: { plans: { schema: { type: ["array", "null"] } } },
  Payment: { currency: { schema: CURRENCY_OBJECT }, source: { schema: ID_OR_OBJECT } },
  Usage: {
    transactionId: { print: (v) => (v === null || v === undefined ? [] : [["transaction_id", v]]), optional: true },
  },
  // the time the change was requested, as GraphQL gives it
  SubscriptionPendingChanges: { requested: { print: (v) => [["requested", v]] } },
  // the event's data is stored JSON text with exact decimals: written into the answer as it is
  Event: {
    data: {
      schema: {
        type: "object",
        properties: { object: { type: "object" }, previous_attributes: { type: "object" } },
        required: ["object"],
      },
      print: (v) => [["data", rawJson(v as string)]],
    },
  },
  // the signing secret only in the answers that reveal it (create, rotate)
  WebhookEndpoint: {
    secret: {
      schema: { type: "string" },
      print: (v) => (v === null || v === undefined ? [] : [["secret", v]]),
      optional: true,
    },
  },
};

/** Timestamps `yyyy-mm-dd hh:mm:ss` in these types (the spec's invoice, payment and embedded customer). */
export const plainTimestamps = (type: string, root: boolean) =>
  type === "Invoice" || type === "Payment" || (type === "Customer" && !root);

/** The form the DateTime scalar serializes an instant in (`Date.prototype.toISOString`, a 4-digit year). */
const UTC_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * An instant as REST prints it: `yyyy-mm-dd hh:mm:ss` (UTC) when `plain`, else ISO 8601 with an explicit
 * offset (`2026-11-22T10:00:00.000+00:00`). The scalar's own form (`UTC_ISO`, what `toISOString` writes) is
 * reshaped as text, without parsing it; any other form is read as a `Date` and printed from its `toISOString`.
 */
export function printInstant(value: string, plain: boolean): string {
  const iso = UTC_ISO.test(value) ? value : new Date(value).toISOString();
  return plain ? iso.slice(0, 19).replace("T", " ") : iso.replace("Z", "+00:00");
}

/**
 * A value of `type` by the rule; a `DateTime` as `yyyy-mm-dd hh:mm:ss` in UTC when `plain`, else ISO 8601 with an
 * explicit offset (`2026-11-22T10:00:00.000+00:00`).
 */
function printValue(type: GraphQLOutputType, value: unknown, where: Where, plain: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (isNonNullType(type)) return printValue(type.ofType, value, where, plain);
  if (isListType(type)) return (value as unknown[]).map((v) => printValue(type.ofType, v, where, plain));
  if (isScalarType(type)) {
    if (type.name === "Decimal") return num(value as string);
    return type.name === "DateTime" ? printInstant(value as string, plain) : value;
  }
  if (isEnumType(type)) return restEnumValue(type.name, value as string);
  const node = value as Node;
  const keys = Object.keys(node).filter((k) => k !== "__typename");
  if (keys.length === 1 && keys[0] === "id") return node.id;
  const object = isAbstractType(type) ? graphqlSchema.getType(node.__typename as string) : type;
  return isObjectType(object) ? printObject(object, node, { how: where.how, root: false }) : node;
}

/** A value under an alias (not a field of the type: a swap's `verification`), its objects' keys in snake_case. */
function aliased(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(aliased);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), aliased(v)]));
}

/** The fields of type `typename` merged into another (`Exception.merge`): not printed themselves. */
const mergedAway = (typename: string | undefined) =>
  new Set(Object.values((typename && EXCEPTIONS[typename]) || {}).flatMap((e) => (e.merge ? [e.merge] : [])));

/** Object `value` with `other`'s keys merged in: its `id`, then `other`'s keys, then its own others. */
function withMerged(value: unknown, other: unknown): unknown {
  if (value === null || typeof value !== "object" || other === null || typeof other !== "object") return value;
  return { ...("id" in value ? { id: value.id } : {}), ...other, ...value };
}

/** What printing an object of one type reads of its type, worked out once per type (`printing`). */
interface TypePrinting {
  fields: ReturnType<GraphQLObjectType["getFields"]>;
  exceptions: Record<string, Exception>;
  merged: Set<string>;
  /** each field's REST name (`restName`), as met */
  names: Map<string, string>;
}

const printings = new Map<GraphQLObjectType, TypePrinting>();

/** The `TypePrinting` of `type` (the schema's types do not change once built). */
function printing(type: GraphQLObjectType): TypePrinting {
  let p = printings.get(type);
  if (!p) {
    p = {
      fields: type.getFields(),
      exceptions: EXCEPTIONS[type.name] ?? {},
      merged: mergedAway(type.name),
      names: new Map(),
    };
    printings.set(type, p);
  }
  return p;
}

function printObject(type: GraphQLObjectType, node: Node, where: Where): Json {
  const { fields, exceptions, merged, names } = printing(type);
  const plain = plainTimestamps(type.name, where.root);
  const rule = (key: string, value = node[key]) =>
    fields[key] ? printValue(fields[key].type, value, where, plain) : aliased(value);
  const printed: Json = {};
  for (const key of Object.keys(node)) {
    if (key === "__typename" || merged.has(key)) continue;
    const value = node[key];
    const exception = Object.hasOwn(exceptions, key) ? exceptions[key] : undefined;
    if (exception?.print) for (const [name, v] of exception.print(value, node, rule, where)) printed[name] = v;
    else {
      let name = names.get(key);
      if (name === undefined) names.set(key, (name = restName(type.name, key)));
      printed[name] = rule(key, exception?.merge ? withMerged(value, node[exception.merge]) : value);
    }
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

/** The fragments of an operation, by name. */
export type Fragments = Map<string, FragmentDefinitionNode>;

/** The fields `selection` selects (through fragment spreads and inline fragments), `__typename` left out. */
export function selectedFields(selection: SelectionSetNode | undefined, fragments: Fragments) {
  const fields: { name: string; key: string; selection?: SelectionSetNode }[] = [];
  for (const s of selection?.selections ?? []) {
    if (s.kind === Kind.FIELD && s.name.value !== "__typename")
      fields.push({ name: s.name.value, key: s.alias?.value ?? s.name.value, selection: s.selectionSet });
    else if (s.kind === Kind.FRAGMENT_SPREAD)
      fields.push(...selectedFields(fragments.get(s.name.value)?.selectionSet, fragments));
    else if (s.kind === Kind.INLINE_FRAGMENT) fields.push(...selectedFields(s.selectionSet, fragments));
  }
  return fields;
}

/**
 * The fields REST prints of `selection` on type `typename` (the OpenAPI schema and the bodies read
 * them): `selectedFields` less the fields merged into another (`Exception.merge`), whose selections
 * the merging field's selection takes in, as the printer merges their values.
 */
export function printedFields(
  typename: string | undefined,
  selection: SelectionSetNode | undefined,
  fragments: Fragments,
) {
  const fields = selectedFields(selection, fragments);
  const exceptions = (typename && EXCEPTIONS[typename]) || {};
  const merged = mergedAway(typename);
  return fields
    .filter((f) => !merged.has(f.name))
    .map((f) => {
      const merge = exceptions[f.name]?.merge;
      if (!merge) return f;
      const own = f.selection?.selections ?? [];
      const isId = (s: SelectionNode) => s.kind === Kind.FIELD && s.name.value === "id";
      const other = fields.find((o) => o.name === merge)?.selection?.selections ?? [];
      const selections = [...own.filter(isId), ...other, ...own.filter((s) => !isId(s))];
      return { ...f, selection: { kind: Kind.SELECTION_SET, selections } as SelectionSetNode };
    });
}

/** The typed document of the operation named `name` (standard.ts's or src/rest/operations'). */
export const operationNamed = (name: OperationName) => ops[`${name}Document`] as Operation;

/** An operation's one root field: the operation, the field's node and schema definition, the fragments. */
export function rootOf(doc: Operation) {
  const fragments: Fragments = new Map();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const operation = getOperationAST(doc)!;
  const node = operation.selectionSet.selections[0] as FieldNode;
  const root = operation.operation === "mutation" ? graphqlSchema.getMutationType() : graphqlSchema.getQueryType();
  const field: GraphQLField<unknown, unknown> = root!.getFields()[node.name.value];
  return { operation, node, field, fragments };
}
