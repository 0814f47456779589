/**
 * The Pothos schema builder: plugins (prisma, relay), scalars and context type only. Types live in
 * ./types/<resource>.ts; ./schema.ts imports them and builds the schema.
 */
import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import ScopeAuthPlugin from "@pothos/plugin-scope-auth";
import type PrismaTypes from "../infra/prisma/generated/pothos-types.js";
import { getDatamodel } from "../infra/prisma/generated/pothos-types.js";
import { idPrefix, isWellFormedId } from "../infra/ids.js";
import { PermissionError, ValidationError } from "../domain/errors.js";
import type { GraphQLContext } from "./context.js";
import {
  DEFAULT_COUNT_LIMIT,
  DEFAULT_PAGE_SIZE,
  MAX_COUNT_LIMIT,
  MAX_PAGE_SIZE,
  type CappedCount,
  type CountPrecision,
} from "./pagination.js";
import { DateScalar, DateTimeResolver, DecimalScalar, JSONObjectResolver } from "./scalars.js";
import { getNamedType } from "graphql";
import { invoicesVisible, PORTAL_INVOICES_HIDDEN, type Auth } from "../services/context.js";
import { rolePermissions, type MemberRole } from "../domain/members.js";

/**
 * The `values` of a Pothos enum over the domain's closed set `T`: every value of `T`, each with
 * its internal value and a description (`values: {...} as const satisfies DescribedValues<T>`), so
 * the enum and the domain's list cannot drift apart.
 */
export type DescribedValues<T extends string> = Record<T, { value: T; description: string }>;

/** GraphQL type of each id prefix: the Relay global id of a node is its resource id. */
export const NODE_TYPES: Record<string, string> = {
  cus: "Customer",
  inv: "Invoice",
  ord: "Order",
  cre: "CreditNote",
  pay: "Payment",
  sou: "Source",
  ses: "CustomerSession",
  rem: "Reminder",
  // catalogue (docs/catalogue.md)
  pro: "Product",
  pla: "Plan",
  add: "Addon",
  cou: "Coupon",
  usa: "Usage",
  // subscriptions (docs/subscriptions.md)
  sub: "Subscription",
  // test clocks (docs/test-clocks.md)
  clk: "TestClock",
  // Chile's SII (docs/sii-setup.md)
  caf: "Caf",
  // receiving (docs/sii-receiving.md)
  swa: "Swap",
  pur: "Purchase",
  // events and webhooks (docs/webhooks.md)
  evt: "Event",
  we: "WebhookEndpoint",
  del: "WebhookDelivery",
  // dunning (docs/dunning.md)
  dun: "DunningCampaign",
  dat: "DunningAttempt",
};

const UNKNOWN_NODE = "Unknown";

/** Largest number of ids one `nodes(ids:)` takes (GRAPHQL_LIMITS.maxNodeIds in ./limits.ts). */
export const MAX_NODE_IDS = 100;

/**
 * Mutations that answer with the rows they wrote (and the rows their validation read), with the
 * relations attached, instead of reading the tree again with their selection; a relation the
 * selection asks beyond those is loaded by Pothos' fallback (docs/performance.md "Statements per
 * request").
 */
const ANSWERED_FROM_WRITE = new Set(["Mutation.createInvoice"]);

/** What each role may do, as a refusal names it (domain/members.ts rolePermissions). */
const ROLE_ALLOWS: Record<MemberRole, string> = {
  admin: "everything",
  finance: "queries and every mutation but those of members, API keys and settings",
  viewer: "queries only",
};

/** The scopes a caller holds (AuthScopes above): a member's come from its role (domain/members.ts rolePermissions). */
export function callerScopes(auth: Auth): {
  apiKey: boolean;
  writer: boolean;
  admin: boolean;
  member: boolean;
  portal: boolean;
} {
  if (auth.portal) return { apiKey: false, writer: false, admin: false, member: false, portal: true };
  const role = auth.member ? rolePermissions(auth.member.role) : { read: true, write: true, admin: true };
  return { apiKey: role.read, writer: role.write, admin: role.admin, member: Boolean(auth.member), portal: false };
}

/** The root fields only a member's session may call. */
const MEMBER_ONLY_FIELDS = new Set(["Mutation.signOutMember"]);
/** The root fields only a customer-portal credential may call. */
const PORTAL_ONLY_FIELDS = new Set(["Query.portal", "Mutation.signOutPortal"]);

/**
 * Why an API key or a member may not call root field `field` (`Type.name`): it is another kind of caller's, else
 * (a member) its role does not allow it.
 */
function refusalOfOrganizationCaller(auth: Auth, field: string): string {
  if (MEMBER_ONLY_FIELDS.has(field)) return `${field} needs a dashboard member's session`;
  const role = auth.member?.role;
  if (!role || PORTAL_ONLY_FIELDS.has(field)) return `${field} needs a customer-portal credential`;
  return `${field} is not allowed to the ${role} role (${ROLE_ALLOWS[role]})`;
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  /**
   * Who may call a root field (docs/customer-portal.md "Security", docs/dashboard.md "Roles"): `apiKey`, a request
   * of the organization itself, with an API key or a dashboard member's session (any role); `writer`, an API key or
   * an admin or finance member; `admin`, an API key or an admin member; `member`, a member's session; `portal`, a
   * request with a customer-portal credential. Every Query field needs `apiKey`, every Mutation field `writer`, the
   * members', API keys' and settings' mutations `admin` (ADMIN_FIELD), unless marked for the portal (PORTAL_FIELD).
   */
  AuthScopes: { apiKey: boolean; writer: boolean; admin: boolean; member: boolean; portal: boolean };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Connection: { totalCount: () => Promise<number>; count: (limit?: number | null) => Promise<CappedCount> };
  Scalars: {
    Decimal: { Input: string; Output: unknown };
    Date: { Input: string; Output: Date | string };
    DateTime: { Input: Date; Output: Date };
    JSONObject: { Input: Record<string, unknown>; Output: unknown };
  };
}>({
  plugins: [ScopeAuthPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => callerScopes(ctx.auth),
    // a subscription field's scopes are checked when it subscribes (a refused stream never opens), not per event
    authorizeOnSubscribe: true,
    // a refused field is a 403 permission_denied in the usual error shape (graphql/errors.ts)
    unauthorizedError: (_parent, ctx, info) =>
      new PermissionError(
        ctx.auth.portal && getNamedType(info.returnType).name === "Invoice" && !invoicesVisible(ctx)
          ? PORTAL_INVOICES_HIDDEN
          : ctx.auth.portal
            ? `${info.parentType.name}.${info.fieldName} is not available to the customer portal`
            : refusalOfOrganizationCaller(ctx.auth, `${info.parentType.name}.${info.fieldName}`),
      ),
  },
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    // outside production a prismaField whose resolver ignores its selection is a bug, but for the
    // fields that answer with the rows they just wrote (ANSWERED_FROM_WRITE)
    onUnusedQuery:
      process.env.NODE_ENV === "production"
        ? null
        : (info) => {
            const field = `${info.parentType.name}.${info.fieldName}`;
            if (!ANSWERED_FROM_WRITE.has(field)) throw new Error(`Prisma query was unused in resolver for ${field}`);
          },
  },
  relay: {
    clientMutationId: "omit",
    cursorType: "String",
    // descriptions of the generic Relay elements (Node, PageInfo, edges, cursors, paging arguments;
    // docs/graphql.md "Paging"); each connection and edge type describes its own items
    nodeTypeOptions: {
      description:
        "An object with a global id (Relay's Object Identification). The id is the resource's own prefixed id " +
        "(`cus_...`, `inv_...`); `node(id:)` and `nodes(ids:)` refetch any of them.",
    },
    idFieldOptions: {
      description: "The resource's id, prefixed by its type (`cus_`, `inv_`, ...): the same id REST uses.",
    },
    pageInfoFieldOptions: {
      description: "Paging state of this page: cursors and whether more items exist either way.",
    },
    edgesFieldOptions: { nullable: false, description: "The page's items, each with its cursor, in the list's order." },
    nodeFieldOptions: { nullable: false, description: "The item." },
    defaultConnectionTypeOptions: {
      description:
        "A page of a list (Relay connection): its items under `edges`, paging state under `pageInfo`, and " +
        "`totalCount`.",
    },
    defaultEdgeTypeOptions: { description: "One item of a page with its cursor." },
    // paging (src/graphql/pagination.ts, docs/graphql.md "Paging")
    firstArgOptions: {
      description:
        `Page forward: at most this many items (0 to ${MAX_PAGE_SIZE}; default ${DEFAULT_PAGE_SIZE}), ` +
        `from the start or after \`after\`. Outside 0 to ${MAX_PAGE_SIZE} is a validation_error on first.`,
    },
    afterArgOptions: {
      description:
        "Page forward from this cursor (an `endCursor` or edge `cursor` this same connection returned): the items " +
        "after it. Another connection's cursor or a malformed one is a validation_error on after.",
    },
    lastArgOptions: {
      description:
        `Page backward: at most this many items (0 to ${MAX_PAGE_SIZE}), the last ones of the list or the ` +
        `ones just before \`before\`, in the list's order. Cannot be combined with first (validation_error on last).`,
    },
    beforeArgOptions: {
      description:
        "Page backward from this cursor (a `startCursor` or edge `cursor` this same connection returned): the items " +
        "before it. Another connection's cursor or a malformed one is a validation_error on before.",
    },
    cursorFieldOptions: {
      description:
        "Opaque cursor of this item, valid only for the connection that returned it; stays valid after the item is " +
        "deleted.",
    },
    pageInfoTypeOptions: { description: "Where a page sits in its list (Relay connection spec)." },
    startCursorFieldOptions: {
      description: "Cursor of the page's first item, for `before`; null when the page is empty.",
    },
    endCursorFieldOptions: { description: "Cursor of the page's last item, for `after`; null when the page is empty." },
    hasNextPageFieldOptions: {
      description:
        "Whether items follow this page. Paging forward (first): exact. Paging backward (last/before): true when the " +
        "`before` item still exists, false with `last` alone (the final page).",
    },
    hasPreviousPageFieldOptions: {
      description:
        "Whether items precede this page. Paging backward (last): exact. Paging forward: true when the `after` item " +
        "still exists (or `offset` > 0 and the list reaches that far); false on the first page.",
    },
    encodeGlobalID: (_typename, id) => String(id),
    decodeGlobalID: (globalID) => {
      const prefix = isWellFormedId(globalID) ? idPrefix(globalID) : undefined;
      return {
        typename: prefix && Object.hasOwn(NODE_TYPES, prefix) ? NODE_TYPES[prefix] : UNKNOWN_NODE,
        id: globalID,
      };
    },
    // an id that is malformed (infra/ids.ts) or whose prefix names no node type reads as "not
    // found" (null), like any unknown id, without a query
    nodeQueryOptions: {
      description:
        "The object with this id (any Node type: Customer, Invoice, Subscription, ...), in the caller's organization " +
        "and mode; null for an unknown, malformed or other organization's id.",
      args: { id: { description: "A prefixed resource id (`cus_...`, `inv_...`)." } },
      resolve: (_root, { id }, _ctx, _info, resolveNode) => (id.typename === UNKNOWN_NODE ? null : resolveNode(id)),
    },
    // at most MAX_NODE_IDS (100) ids per call (docs/limits.md)
    nodesQueryOptions: {
      description:
        `The nodes with these ids, in order (null for an unknown id). At most ${MAX_NODE_IDS} ids; more ` +
        `is a validation_error on ids.`,
      args: { ids: { description: `Prefixed resource ids, at most ${MAX_NODE_IDS}.` } },
      // Pothos resolves `args.ids` (not the list handed to resolveNodes): unknown ones become null there
      resolve: (_root, args, _ctx, _info, resolveNodes) => {
        if (args.ids.length > MAX_NODE_IDS)
          throw ValidationError.field("ids", `at most ${MAX_NODE_IDS} ids per request (got ${args.ids.length})`);
        (args as { ids: ({ id: string; typename: string } | null)[] }).ids = args.ids.map((id) =>
          id.typename === UNKNOWN_NODE ? null : id,
        );
        return resolveNodes([]);
      },
    },
  },
});

builder.addScalarType("Decimal", DecimalScalar);
builder.addScalarType("Date", DateScalar);
builder.addScalarType("DateTime", DateTimeResolver);
builder.addScalarType("JSONObject", JSONObjectResolver);

builder.queryType({
  description:
    "Reads. Every field needs an API key or a dashboard member's session (any role), but those marked for the " +
    "customer portal, which a portal credential may call too; results are scoped to the caller's organization and " +
    "mode (and, for a portal credential, its customer).",
  authScopes: { apiKey: true },
});
builder.mutationType({
  description:
    "Writes. Each mutation is one database transaction; a failed one changes nothing. Every field needs an API " +
    "key or an admin or finance member's session (the members', API keys' and settings' ones an admin's), but " +
    "those marked for the customer portal.",
  authScopes: { writer: true },
});
/**
 * The root of GraphQL subscriptions, named `SubscriptionRoot`: the name `Subscription` is the billing
 * subscription's (a Node), and Pothos would otherwise take that type as the root (docs/graphql.md
 * "Ids and the schema's roots").
 */
builder.subscriptionType({
  name: "SubscriptionRoot",
  description:
    "Live streams, over Server-Sent Events (GraphQL over SSE, distinct connections mode: a POST or GET to /graphql " +
    "with `Accept: text/event-stream`). Every field needs an API key or a member's session (a customer-portal " +
    "credential is refused) and " +
    'counts as one request for the rate limit (docs/webhooks.md "The live event stream (GraphQL)").',
  authScopes: { apiKey: true },
});

/**
 * The options that mark a root field for the customer portal (docs/customer-portal.md): callable
 * with an API key or with a portal credential. Its resolver (or service) must check that every id
 * a portal credential names is its customer's (services/context.ts `checkPortalCustomer`).
 */
export const PORTAL_FIELD = { authScopes: { writer: true, portal: true }, skipTypeScopes: true } as const;

/**
 * The options that mark a mutation for admins (docs/dashboard.md "Roles"): members, API keys and settings (webhook
 * endpoints, certificates, CAFs, organization settings and branding). An API key or an admin member may call it; a
 * finance or viewer member gets permission_denied.
 */
export const ADMIN_FIELD = { authScopes: { admin: true } } as const;

/**
 * The options of a field leading from another object to an invoice (CreditNote.invoice, Order.invoice,
 * Payment.invoice): refused (permission_denied) to a portal credential whose session hides invoices
 * (docs/customer-portal.md "Sessions that hide invoices"); every API key passes.
 */
export const INVOICE_RELATION = {
  authScopes: (_parent: unknown, _args: unknown, ctx: GraphQLContext) => invoicesVisible(ctx),
} as const;

builder.globalConnectionField("totalCount", (t) =>
  t.int({
    description:
      "Number of items matching the filters, over all pages, exact: a full count, whose time grows with the " +
      "matching items " +
      "(0.2 to 0.7 s for a million on the development machine). For a number to show, prefer `count`, which stops at " +
      "its limit.",
    resolve: (connection) => connection.totalCount(),
  }),
);

const CountPrecisionEnum = builder.enumType("CountPrecision", {
  description: "Whether a `Count` is the number of matching items or a lower bound of it.",
  values: {
    exact: { value: "exact", description: "`count` is the number of matching items" },
    at_least: {
      value: "at_least",
      description: 'more items match than the limit asked: `count` is the limit, a lower bound (show it as "10,000+")',
    },
  } as const satisfies DescribedValues<CountPrecision>,
});

const CountRef = builder.objectRef<CappedCount>("Count").implement({
  description: 'A count of the items matching a list\'s filters that stops at a limit (docs/graphql.md "Counting").',
  fields: (t) => ({
    count: t.exposeInt("count", {
      description: "the number of matching items when `precision` is exact; the limit when it is at_least",
    }),
    precision: t.expose("precision", {
      type: CountPrecisionEnum,
      description: "exact, or at_least when more items match than the limit",
    }),
  }),
});

builder.globalConnectionField("count", (t) =>
  t.field({
    type: CountRef,
    description:
      `Number of items matching the filters, over all pages, counted up to \`limit\` ` +
      `(default ${DEFAULT_COUNT_LIMIT.toLocaleString("en")}): ` +
      "exact below it, else the limit with precision at_least. Its time is bounded by the limit (a few ms for " +
      "10,000), whatever the list's size.",
    args: {
      limit: t.arg.int({
        description:
          `count at most this many items (1 to ${MAX_COUNT_LIMIT.toLocaleString("en")}; ` +
          `default ${DEFAULT_COUNT_LIMIT.toLocaleString("en")}); outside that range: validation_error on limit`,
      }),
    },
    resolve: (connection, args) => connection.count(args.limit),
  }),
);
