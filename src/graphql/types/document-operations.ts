/**
 * What invoices, orders and credit notes declare in the same shape besides their output fields
 * (document.ts): the node options, the input type, the list query (`invoices`, `orders`,
 * `creditNotes`) with its `where` input, and the create, update, delete and finalize mutations.
 * `documentOperations(kind)` gives them bound to one kind (`DocumentKind`: its model, its noun,
 * its id's description); invoice.ts, order.ts and credit-note.ts pass only what is their own:
 * descriptions, input fields, filters and their conditions, service calls. The descriptions that
 * differ only by the kind's noun (the list's, its page's and edge's, finalize's) are written once
 * here; the printed schema is the same as when each kind wrote them.
 */
import type { InputFieldMap, InputObjectRef, InputShapeFromFields, ObjectRef } from "@pothos/core";
import { builder } from "../builder.js";
import type { GraphQLContext } from "../context.js";
import { documentConnection, offsetArg } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { DeletePayload, documentWhereConditions, documentWhereFields } from "./document.js";

type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;
type MutationFields = PothosSchemaTypes.MutationFieldBuilder<BuilderTypes, object>;
type InputFields = PothosSchemaTypes.InputFieldBuilder<BuilderTypes, "InputObject">;

/** A document kind: its GraphQL type (the Prisma model of the same name), its name in a sentence, its id. */
export interface DocumentKind {
  /** the Prisma model, the GraphQL type of the same name */
  model: "Invoice" | "Order" | "CreditNote";
  /** the kind in a sentence: "invoice", "order", "credit note" (its plural adds an s) */
  noun: string;
  /** description of the mutations' `id` argument, e.g. "`inv_` id" */
  idDescription: string;
}

/** The Prisma client delegate of the kind's model (`ctx.prisma.invoice`, ...), also its list's field name but the s. */
function delegateOf(kind: DocumentKind) {
  return (kind.model[0].toLowerCase() + kind.model.slice(1)) as "invoice" | "order" | "creditNote";
}

/** A written document's row: what a service's create, update or finalize returns (its id is read back). */
type Written = Promise<{ id: string }>;

/**
 * The document `id` as the selection asks for it (`query`, what Pothos' prismaField passes): the
 * same `findUniqueOrThrow` each kind's mutations read back with after the service wrote it.
 */
function readBack(ctx: GraphQLContext, kind: DocumentKind, query: object, id: string) {
  // the delegates differ only in their argument types; `query` is the selection of the kind's own type
  const delegate = ctx.prisma[delegateOf(kind)] as unknown as { findUniqueOrThrow(args: object): Promise<never> };
  return delegate.findUniqueOrThrow({ ...query, where: { id } });
}

/**
 * `args` as the helper declares them: Pothos does not compute the shape of arguments whose input
 * type is a type parameter (`F`, `I` below), though at run time they are what it declares.
 */
function declared<A>(args: unknown): A {
  return args as A;
}

/** The filters of a document list's `where` that the shared `documentWhereConditions` reads. */
type DocumentWhere = Parameters<typeof documentWhereConditions>[0];

/** What a kind's list (`documentList`) takes besides the kind. */
interface DocumentListOptions<F extends InputFieldMap> {
  /** the node type (Invoice, Order, CreditNote) */
  type: ObjectRef<BuilderTypes, unknown>;
  /** the kind's own filters, the first fields of its `where` input (documentWhereFields' follow) */
  where: (t: InputFields) => F;
  /** the Prisma conditions of those filters (documentWhereConditions' follow them) */
  conditions: (where: Partial<InputShapeFromFields<F>>) => object[];
  /** what documents created at the same instant are, for the list's description (" (the cycles ...)") */
  ties?: string;
}

/**
 * A list's description: its order (documentConnection's), the same for every kind. `ties` says
 * what documents created together are ("the cycles one billing run bills"); they are called by
 * the noun's last word ("notes").
 */
function listDescription(kind: DocumentKind, ties: string | undefined) {
  const plural = `${kind.noun}s`;
  return (
    `${plural[0].toUpperCase()}${plural.slice(1)} of the caller's organization and mode, newest first; ` +
    `${plural.split(" ").at(-1)} created at the same instant${ties ? ` (${ties})` : ""} by number, highest first, ` +
    'drafts (no number yet) before them, then by id (docs/graphql.md "Order of lists").'
  );
}

/**
 * The list of a document kind (`invoices`, `orders`, `creditNotes`, the delegate's plural) and its
 * `where` input (`InvoiceWhere`, ...): a connection over the caller's organization and mode
 * (documentConnection: newest first, ties by number) with `where` (the kind's own filters, then
 * documentWhereFields') and `offset`.
 */
function documentList<F extends InputFieldMap>(kind: DocumentKind, o: DocumentListOptions<F>) {
  const where = builder.inputType(`${kind.model}Where`, {
    description: `Filters of the ${kind.noun}s list; every given filter must match.`,
    fields: (t) => ({ ...o.where(t), ...documentWhereFields(t) }),
  });
  builder.queryField(`${delegateOf(kind)}s`, (t) =>
    t.connection(
      {
        type: o.type,
        description: listDescription(kind, o.ties),
        args: {
          where: t.arg({ type: where, description: `filters; none: every ${kind.noun}` }),
          offset: offsetArg(t),
        },
        resolve: (_root, args, ctx, info) => {
          const w = declared<{ where?: (InputShapeFromFields<F> & DocumentWhere) | null }>(args).where ?? {};
          return documentConnection(ctx, info, ctx.prisma[delegateOf(kind)], args, [
            ...o.conditions(w),
            ...documentWhereConditions(w),
          ]);
        },
      },
      { description: `A page of ${kind.noun}s, newest first, ties by number (Relay connection).` },
      { description: `${/^[aeiou]/.test(kind.noun) ? "An" : "A"} ${kind.noun} in a page, with its cursor.` },
    ),
  );
}

/** What a create mutation (`createDocumentField`) takes besides the kind. */
interface CreateDocumentOptions<I> {
  description: string;
  /** the kind's input type and the description of the `input` argument */
  input: InputObjectRef<BuilderTypes, I>;
  inputDescription: string;
  /** the service's create */
  create: (ctx: GraphQLContext, input: I) => Written;
}

/** `createX(input)`: the service creates the draft, then it is read as the selection asks. */
function createDocumentField<I>(t: MutationFields, kind: DocumentKind, o: CreateDocumentOptions<I>) {
  return t.prismaField({
    type: kind.model,
    description: o.description,
    args: { input: t.arg({ type: o.input, required: true, description: o.inputDescription }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await o.create(ctx, declared<{ input: I }>(args).input);
      return readBack(ctx, kind, query, created.id);
    },
  });
}

/** What an update mutation (`updateDocumentField`) takes besides the kind. */
interface UpdateDocumentOptions<I> {
  description: string;
  /** the kind's input type (the `input` argument is "the fields to change") */
  input: InputObjectRef<BuilderTypes, I>;
  /** the service's update */
  update: (ctx: GraphQLContext, id: string, input: I) => Written;
}

/** `updateX(id, input)`: the service updates the draft, then it is read as the selection asks. */
function updateDocumentField<I>(t: MutationFields, kind: DocumentKind, o: UpdateDocumentOptions<I>) {
  return t.prismaField({
    type: kind.model,
    description: o.description,
    args: {
      id: t.arg.id({ required: true, description: kind.idDescription }),
      input: t.arg({ type: o.input, required: true, description: "the fields to change" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const { id, input } = declared<{ id: string | number; input: I }>(args);
      const updated = await o.update(ctx, String(id), input);
      return readBack(ctx, kind, query, updated.id);
    },
  });
}

/** What a delete mutation (`deleteDocumentField`) takes besides the kind. */
interface DeleteDocumentOptions {
  description: string;
  /** the service's delete */
  remove: (ctx: GraphQLContext, id: string) => Promise<unknown>;
}

/** `deleteX(id)`: the service deletes the draft (`remove`); answers `{ deletedId, deleted: true }`. */
function deleteDocumentField(t: MutationFields, kind: DocumentKind, o: DeleteDocumentOptions) {
  return t.field({
    type: DeletePayload,
    description: o.description,
    args: { id: t.arg.id({ required: true, description: kind.idDescription }) },
    resolve: async (_root, args, ctx) => {
      await o.remove(ctx, String(args.id));
      return { id: String(args.id), deleted: true };
    },
  });
}

/** What a mutation of one document by id (`documentActionField`) takes besides the kind. */
interface DocumentActionOptions {
  description: string;
  /** the service's call */
  run: (ctx: GraphQLContext, id: string) => Written;
}

/**
 * A mutation of one document by its id (`finalizeX`, markInvoiceUncollectible): the service's
 * `run`, then the document read as the selection asks.
 */
function documentActionField(t: MutationFields, kind: DocumentKind, o: DocumentActionOptions) {
  return t.prismaField({
    type: kind.model,
    description: o.description,
    args: { id: t.arg.id({ required: true, description: kind.idDescription }) },
    resolve: async (query, _root, args, ctx) => {
      const written = await o.run(ctx, String(args.id));
      return readBack(ctx, kind, query, written.id);
    },
  });
}

/** `finalizeX(id)`: the service numbers and locks the draft (`finalize`); the description is the kind's noun's. */
function finalizeDocumentField(
  t: MutationFields,
  kind: DocumentKind,
  finalize: (ctx: GraphQLContext, id: string) => Written,
) {
  return documentActionField(t, kind, {
    description:
      `Numbers and locks a draft ${kind.noun}, freezing its customer and issuer as issued (\`issuedCustomer\`, ` +
      "`issuer`). Errors: not_found, invalid_state (not a draft), validation_error (no lines).",
    run: finalize,
  });
}

/**
 * The helpers above bound to one kind: what invoice.ts, order.ts and credit-note.ts call
 * (`invoices.list({...})`, `invoices.finalize(t, finalizeInvoice)`, ...).
 */
export function documentOperations(kind: DocumentKind) {
  return {
    /** the node options every kind's `builder.prismaNode` spreads: its `id`, found in the caller's tenant, nullable */
    node: {
      id: { field: "id", description: kind.idDescription },
      findUnique: (id: string, ctx: GraphQLContext) => ({ id, ...tenant(ctx) }),
      nullable: true,
    } as const,
    /** the kind's input (`InvoiceInput`, ...): what its create and update mutations take */
    input: <F extends InputFieldMap>(description: string, fields: (t: InputFields) => F) =>
      builder.inputType(`${kind.model}Input`, { description, fields }),
    /** the kind's list and its `where` input (documentList) */
    list: <F extends InputFieldMap>(o: DocumentListOptions<F>) => documentList(kind, o),
    /** `createX` (createDocumentField) */
    create: <I>(t: MutationFields, o: CreateDocumentOptions<I>) => createDocumentField(t, kind, o),
    /** `updateX` (updateDocumentField) */
    update: <I>(t: MutationFields, o: UpdateDocumentOptions<I>) => updateDocumentField(t, kind, o),
    /** `deleteX` (deleteDocumentField) */
    delete: (t: MutationFields, o: DeleteDocumentOptions) => deleteDocumentField(t, kind, o),
    /** a mutation of one document by id (documentActionField) */
    action: (t: MutationFields, o: DocumentActionOptions) => documentActionField(t, kind, o),
    /** `finalizeX` (finalizeDocumentField) */
    finalize: (t: MutationFields, finalize: (ctx: GraphQLContext, id: string) => Written) =>
      finalizeDocumentField(t, kind, finalize),
  };
}
