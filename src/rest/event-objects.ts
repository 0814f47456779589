/**
 * How an event's `data.object` is printed (docs/webhooks.md "Payloads"): the resource exactly as
 * the REST API's retrieve prints it, through the same fragment (`<Type>Fields` of
 * src/rest/operations) and the same printer, read with the use case's own context (its
 * transaction), so the object is what the transaction wrote. One GraphQL execution of `nodes(ids:)`
 * per (at most 100) resources, which the joined reads answer with one SQL statement per type.
 * The entry points install it (services/events.ts `installEventPrinter`).
 */
import { execute, Kind, parse, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from "graphql";
import type { EventObjectKind } from "../domain/events.js";
import { MAX_NODE_IDS } from "../graphql/builder.js";
import { schema } from "../graphql/schema.js";
import type { GraphQLContext } from "../graphql/context.js";
import * as ops from "../graphql/generated/operations.js";
import type { EventPrinter, PrintedObject } from "../services/events.js";
import type { ServiceContext } from "../services/context.js";
import { stringify } from "./json.js";
import { printNode } from "./printer.js";

/** The GraphQL type of each kind of event object. */
export const EVENT_OBJECT_TYPES: Record<EventObjectKind, string> = {
  customer: "Customer",
  invoice: "Invoice",
  order: "Order",
  credit_note: "CreditNote",
  payment: "Payment",
  subscription: "Subscription",
  swap: "Swap",
  reminder: "Reminder",
  webhook_endpoint: "WebhookEndpoint",
  dunning_attempt: "DunningAttempt",
};

/** Every fragment of the REST operations, by name. */
function allFragments(): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const doc of Object.values(ops) as unknown[]) {
    const definitions = (doc as DocumentNode | undefined)?.definitions;
    if (!Array.isArray(definitions)) continue;
    for (const d of definitions as DocumentNode["definitions"])
      if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  }
  return fragments;
}

/** The fragments `name` spreads, itself included, transitively. */
function fragmentClosure(name: string, fragments: Map<string, FragmentDefinitionNode>): FragmentDefinitionNode[] {
  const found = new Map<string, FragmentDefinitionNode>();
  const visit = (n: string) => {
    if (found.has(n)) return;
    const fragment = fragments.get(n);
    if (!fragment) throw new Error(`event objects: no fragment ${n} in the REST operations`);
    found.set(n, fragment);
    const walk = (selection: SelectionSetNode | undefined) => {
      for (const s of selection?.selections ?? []) {
        if (s.kind === Kind.FRAGMENT_SPREAD) visit(s.name.value);
        else walk(s.selectionSet);
      }
    };
    walk(fragment.selectionSet);
  };
  visit(name);
  return [...found.values()];
}

const documents = new Map<string, DocumentNode>();

/**
 * `query EventObjects($ids: [ID!]!, $expandInvoice: Boolean! = false) { nodes(ids: $ids) {
 * __typename ...<Type>Fields } }` with the fragments it needs.
 */
function documentOf(typename: string): DocumentNode {
  let doc = documents.get(typename);
  if (doc) return doc;
  const fragments = fragmentClosure(`${typename}Fields`, allFragments());
  const text = `query EventObjects($ids: [ID!]!, $expandInvoice: Boolean! = false) {
    nodes(ids: $ids) { __typename ...${typename}Fields } }`;
  doc = { kind: Kind.DOCUMENT, definitions: [...parse(text).definitions, ...fragments] };
  documents.set(typename, doc);
  return doc;
}

/** The context a printing runs in: the use case's (its transaction, organization and mode) as an API key's. */
function printingContext(ctx: ServiceContext): GraphQLContext {
  return {
    ...ctx,
    // links absolute when a request (or PUBLIC_URL) gives the base; background work has no request
    baseUrl: ctx.baseUrl || ctx.settings.publicUrl || "",
    auth: { ...ctx.auth, portal: undefined },
    requestId: "event",
    logger: undefined as never,
    mailer: null,
  };
}

/** The REST adapter's printing of event objects (services/events.ts EventPrinter). */
export const restEventPrinter: EventPrinter = {
  async objects(ctx, kind, ids) {
    const typename = EVENT_OBJECT_TYPES[kind];
    const document = documentOf(typename);
    const printed: PrintedObject[] = [];
    for (let start = 0; start < ids.length; start += MAX_NODE_IDS) {
      const chunk = ids.slice(start, start + MAX_NODE_IDS);
      const result = await execute({
        schema,
        document,
        contextValue: printingContext(ctx),
        variableValues: { ids: chunk },
      });
      if (result.errors?.length) throw result.errors[0].originalError ?? result.errors[0];
      const nodes = (result.data as { nodes: (Record<string, unknown> | null)[] }).nodes;
      nodes.forEach((node, i) => {
        if (!node || node.__typename !== typename) throw new Error(`event object ${kind} ${chunk[i]} not found`);
        printed.push(printNode(typename, node, { shape: "retrieve", expand: new Set() }) as PrintedObject);
      });
    }
    return printed;
  },
  json: stringify,
};
