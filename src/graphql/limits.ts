/**
 * Bounds on one GraphQL request (docs/limits.md "GraphQL limits"), as Yoga plugins:
 *
 * - graphql-armor's max-tokens (checked while parsing, so a huge document stops at the first token
 *   over the limit), max-depth, max-aliases and max-directives;
 * - a cost rule of this project (`costRule`), since armor's cost-limit prices every object and
 *   scalar alike: a PDF must cost far more than a scalar, and a list or connection multiplies what
 *   is selected under it;
 * - field suggestions ("Did you mean ...") removed from every validation error
 *   (armor's block-field-suggestions), so field names are not revealed before authentication;
 * - a time budget for query operations (`timeBudgetPlugin`).
 *
 * A refused document answers with code `query_too_complex` (the limit and what was found in the
 * message) before anything runs; the REST adapter's documents (src/rest/operations) stay within
 * every limit at the largest page size (test/graphql-limits.test.ts checks them all).
 */
import {
  GraphQLError,
  Kind,
  print,
  type DocumentNode,
  type DefinitionNode,
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  isInterfaceType,
  type ASTVisitor,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValidationContext,
  type GraphQLOutputType,
  type ValueNode,
  defaultFieldResolver,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { maxTokensPlugin } from "@escape.tech/graphql-armor-max-tokens";
import { maxDepthPlugin } from "@escape.tech/graphql-armor-max-depth";
import { maxAliasesPlugin } from "@escape.tech/graphql-armor-max-aliases";
import { maxDirectivesPlugin } from "@escape.tech/graphql-armor-max-directives";
import { blockFieldSuggestionsPlugin } from "@escape.tech/graphql-armor-block-field-suggestions";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "./pagination.js";
import { MAX_NODE_IDS } from "./builder.js";
import { projectErrorCode } from "./errors.js";
import * as restOperations from "./generated/operations.js";

/** The limits and their defaults (docs/limits.md lists them). */
export const GRAPHQL_LIMITS = {
  /** lexical tokens of the document (the REST adapter's largest document has under 300) */
  maxTokens: 1000,
  /** nesting of selections, fragments flattened (introspection not counted) */
  maxDepth: 10,
  /** aliased fields in one operation */
  maxAliases: 30,
  /** directives in one operation */
  maxDirectives: 20,
  /** the cost of one operation by `costRule` (the REST adapter's own documents are exempt: `isRestDocument`) */
  maxCost: 3_000,
  /**
   * the rows (objects) one operation may resolve by `costRule`'s count: a page of 100 invoices with
   * their lines is 600, two such pages (1,200) are refused (bench/abuse.ts: the rows, not the fields,
   * are what holds the event loop)
   */
  maxRows: 1_000,
  /** ids in one `nodes(ids:)` */
  maxNodeIds: MAX_NODE_IDS,
} as const;

/**
 * Cost of the fields that do far more work than reading a column: rendering a PDF (pdfkit, tens of
 * milliseconds of CPU each, in the PDF thread) and the stored XML of a purchase. A row read and
 * resolved costs the main thread about 60 microseconds (bench/abuse.ts: 13,200 objects in 0.8 s);
 * the rows themselves are bounded by `maxRows`. With `maxCost` 3,000 a request can render at most
 * two PDFs, however they are nested or aliased.
 */
export const FIELD_COSTS: Readonly<Record<string, number>> = {
  "Invoice.pdf": 1_000,
  "Order.pdf": 1_000,
  "CreditNote.pdf": 1_000,
  "Swap.pdf": 1_000,
  "Purchase.xml": 50,
};

/**
 * Whether `costRule` counts the items of this field as rows: a page (a connection: its `first`/
 * `last`) or a list of objects (`nodes(ids:)`, an invoice's lines), not a page's list of edges
 * (counted by the page) and not a single object (the invoice's customer), which the field costs
 * and the aliases limit bound.
 */
function itemsAreRows(type: GraphQLOutputType): boolean {
  const named = getNamedType(type);
  if (named.name.endsWith("Connection") && isObjectType(named) && named.getFields().edges) return true;
  return isListType(getNullableType(type)) && !named.name.endsWith("Edge");
}

/** Items assumed for a plain list field (an invoice's lines, payments, ...). */
export const LIST_FACTOR = 5;

/**
 * Cost of a field with a selection (an object, a list of objects, a page, its edges and nodes):
 * each is a row or a join to read and an object to build. A scalar or enum field costs
 * SCALAR_COST: reading a column of a row already read is not work the limit needs to price (the
 * rows are bounded by `maxRows`, the fields a type has are finite and repeated ones merge, aliases
 * are bounded by `maxAliases`), and pricing it made an ordinary page refuse: 50 invoices with 12
 * fields and their payments with 9 cost 3,001 when every scalar cost 1 (docs/limits.md "Cost").
 */
export const OBJECT_COST = 1;
export const SCALAR_COST = 0;

/**
 * Cost of a connection's `totalCount`: an exact COUNT of every matching row, 0.2 to 0.7 s at a
 * million rows (docs/performance.md "Deep pages"), so at most five in one request. Its capped
 * sibling `count(limit:)` costs what an object costs (its work stops at the limit).
 */
export const TOTAL_COUNT_COST = 500;

/** A GraphQL error of the limits, in the project's error shape (`extensions.code`). */
export function tooComplex(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "query_too_complex" } });
}

/** Literal integer of an argument; null when it is a variable or absent (the worst case applies). */
function intArgument(node: FieldNode, name: string): number | null | undefined {
  const arg = node.arguments?.find((a) => a.name.value === name);
  if (!arg) return undefined;
  return arg.value.kind === Kind.INT ? Number(arg.value.value) : null;
}

function listArgumentLength(value: ValueNode | undefined): number | null {
  if (!value) return null;
  if (value.kind === Kind.LIST) return value.values.length;
  if (value.kind === Kind.VARIABLE) return null;
  return 1; // a single value coerces to a list of one
}

/** True for a Relay connection type (its items under `edges`). */
function isConnection(type: GraphQLOutputType): boolean {
  const named = getNamedType(type);
  return named.name.endsWith("Connection") && isObjectType(named) && Boolean(named.getFields().edges);
}

/**
 * How many times the selection under `field` runs: for a connection its page size, `first`/`last`
 * (the default page size when absent, the largest page when it is a variable), which applies to
 * its `edges` (`pageSize`, given for the fields under a connection), not to `pageInfo` or
 * `totalCount`, read once a page; the ids of `nodes(ids:)`; LIST_FACTOR for any other list; 1
 * otherwise.
 */
function multiplier(node: FieldNode, type: GraphQLOutputType, parentName: string, pageSize: number): number {
  const named = getNamedType(type);
  if (parentName.endsWith("Connection") && node.name.value === "edges") return pageSize;
  if (node.name.value === "nodes" && node.arguments?.some((a) => a.name.value === "ids")) {
    return listArgumentLength(node.arguments.find((a) => a.name.value === "ids")!.value) ?? GRAPHQL_LIMITS.maxNodeIds;
  }
  if (named.name.endsWith("Connection") && isObjectType(named) && named.getFields().edges) {
    const first = intArgument(node, "first");
    const last = intArgument(node, "last");
    const size = first === null || last === null ? MAX_PAGE_SIZE : (first ?? last ?? DEFAULT_PAGE_SIZE);
    return Math.max(1, Math.min(size, MAX_PAGE_SIZE));
  }
  return isListType(getNullableType(type)) ? LIST_FACTOR : 1;
}

/** Cost and rows of a selection (see costRule). */
type Price = { cost: number; rows: number };

/**
 * Validation rule: the cost of each operation is the sum over its selected fields of
 * `FIELD_COSTS[Type.field]`, else TOTAL_COUNT_COST for a connection's `totalCount`, OBJECT_COST for
 * a field with a selection and SCALAR_COST (0) for a scalar or enum, plus, for a field with a selection, the cost of
 * that selection times `multiplier` (page size, ids, LIST_FACTOR). Inline fragments and fragment spreads add up
 * (an upper bound when they are on different types); `__typename` and introspection cost nothing.
 * Its rows are the items of its pages and lists (`itemsAreRows`) times how often each runs:
 * `invoices(first: 100) { edges { node { lines { id } customer { id } } } }` is 100 + 100 x 5 = 600
 * rows (a single object such as `customer` is not a row). Over `maxCost` or over `maxRows`:
 * `query_too_complex`.
 */
export function costRule(maxCost: number = GRAPHQL_LIMITS.maxCost, maxRows: number = GRAPHQL_LIMITS.maxRows) {
  return (context: ValidationContext): ASTVisitor => {
    const schema = context.getSchema();
    const pricer = new SelectionPricer(context);
    return {
      OperationDefinition(operation) {
        const root =
          operation.operation === "query"
            ? schema.getQueryType()
            : operation.operation === "mutation"
              ? schema.getMutationType()
              : schema.getSubscriptionType();
        if (!root) return;
        const price = pricer.selection(operation.selectionSet, root.name, new Set());
        const error = overLimit(price, maxCost, maxRows);
        if (error)
          context.reportError(new GraphQLError(error.message, { nodes: [operation], extensions: error.extensions }));
      },
    };
  };
}

/** The message and extensions of an operation's `query_too_complex` error (costRule), or null within the limits. */
function overLimit({ cost, rows }: Price, maxCost: number, maxRows: number) {
  const extensions = { code: "query_too_complex", cost, maxCost, rows, maxRows };
  if (cost > maxCost) {
    const message =
      `The query costs ${cost}, more than the limit of ${maxCost} (a PDF costs ${FIELD_COSTS["Invoice.pdf"]}` +
      `, an exact totalCount ${TOTAL_COUNT_COST}; a list multiplies what it selects by its page size). Ask ` +
      `for fewer items, fewer PDFs or fewer fields.`;
    return { message, extensions };
  }
  if (rows > maxRows) {
    const message =
      `The query reads up to ${rows} rows, more than the limit of ${maxRows} (a list or page multiplies the ` +
      `rows under it by its size: a page of 100 invoices with their lines is 600). Ask for fewer or ` +
      `smaller pages.`;
    return { message, extensions };
  }
  return null;
}

/**
 * Prices selections for costRule within one validation (`context`): fields, inline fragments and fragment spreads;
 * a fragment's price is kept per type and page size, so a fragment spread many times is priced once.
 */
class SelectionPricer {
  private readonly fragmentCosts = new Map<string, Map<string, Price>>();

  constructor(private readonly context: ValidationContext) {}

  /**
   * The price of `set` on type `parentName`; `seen` the fragments spread on the way here (a cycle is another rule's
   * error); `pageSize`: under a connection, its page size (what its `edges` multiply by), else 1.
   */
  selection(set: SelectionSetNode, parentName: string, seen: Set<string>, pageSize = 1): Price {
    const total: Price = { cost: 0, rows: 0 };
    const parent = this.context.getSchema().getType(parentName);
    for (const selection of set.selections) {
      let price: Price | null;
      if (selection.kind === Kind.FIELD) price = this.field(selection, parent, parentName, { seen, pageSize });
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition?.name.value ?? parentName;
        price = this.selection(selection.selectionSet, type, seen, pageSize);
      } else price = this.fragment(selection.name.value, seen, pageSize);
      if (price) {
        total.cost += price.cost;
        total.rows += price.rows;
      }
    }
    return total;
  }

  /** The price of one field of `parent` (null: `__typename`, introspection or an unknown field, priced 0). */
  private field(
    selection: FieldNode,
    parent: GraphQLNamedType | null | undefined,
    parentName: string,
    { seen, pageSize }: { seen: Set<string>; pageSize: number },
  ): Price | null {
    const name = selection.name.value;
    if (name === "__typename" || name === "__schema" || name === "__type") return null;
    const field: GraphQLField<unknown, unknown> | undefined =
      parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
    if (!field) return null; // unknown fields are another rule's error
    const totalCount = name === "totalCount" && parentName.endsWith("Connection");
    let cost =
      FIELD_COSTS[`${parentName}.${name}`] ??
      (totalCount ? TOTAL_COUNT_COST : selection.selectionSet ? OBJECT_COST : SCALAR_COST);
    let rows = 0;
    if (selection.selectionSet) {
      const size = multiplier(selection, field.type, parentName, pageSize);
      const typeName = getNamedType(field.type).name;
      // a connection's own selection runs once; its edges run `size` times
      const connection = isConnection(field.type);
      const times = connection ? 1 : size;
      const inner = this.selection(selection.selectionSet, typeName, seen, connection ? size : 1);
      cost += times * inner.cost;
      rows += (itemsAreRows(field.type) ? size : 0) + times * inner.rows;
    }
    return { cost, rows };
  }

  /** The price of a fragment spread (null: unknown, or already spread on the way here). */
  private fragment(name: string, seen: Set<string>, pageSize: number): Price | null {
    const fragment: FragmentDefinitionNode | null | undefined = this.context.getFragment(name);
    if (!fragment || seen.has(fragment.name.value)) return null; // cycles are another rule's error
    const type = fragment.typeCondition.name.value;
    const cacheKey = `${type}:${pageSize}`;
    const cached = this.fragmentCosts.get(fragment.name.value)?.get(cacheKey);
    if (cached !== undefined) return cached;
    const price = this.selection(fragment.selectionSet, type, new Set(seen).add(fragment.name.value), pageSize);
    if (!this.fragmentCosts.has(fragment.name.value)) this.fragmentCosts.set(fragment.name.value, new Map());
    this.fragmentCosts.get(fragment.name.value)!.set(cacheKey, price);
    return price;
  }
}

/** armor's rejection callbacks: its error (a "Syntax Error: ..." without a code) becomes `query_too_complex`. */
function relabel(what: string) {
  return {
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) => {
        const message = `${error.message.replace(/^Syntax Error: /, "")} (${what})`;
        if (context) context.reportError(tooComplex(message));
        else throw tooComplex(message);
      },
    ],
  };
}

/**
 * The documents the REST adapter sends (src/rest/operations, printed as rest/router.ts prints
 * them). They are fixed, their page size is at most 100 by the REST rules, and priced at their
 * worst (every variable page at 100, every nested list at LIST_FACTOR) the list documents would cost
 * more than any ad-hoc query may: so the cost rule does not apply to them. Sent to /graphql as
 * they are, they cost what the same REST call costs. Every other limit applies to them.
 */
const REST_DOCUMENTS = new Set(
  Object.values(restOperations)
    .filter((d): d is DocumentNode => typeof d === "object" && d !== null && (d as DocumentNode).kind === Kind.DOCUMENT)
    .map((d) => print(d)),
);

/** True when `query` is, character for character, a document of the REST adapter. */
export function isRestDocument(query: string | undefined): boolean {
  return query !== undefined && REST_DOCUMENTS.has(query);
}

/** Every limit of the document, as Yoga plugins, in the order they apply. */
export function documentLimitPlugins(): Plugin[] {
  return [
    // tokens: counted by the parser; armor throws (no context) and relabel turns it into ours
    maxTokensPlugin({ n: GRAPHQL_LIMITS.maxTokens, ...relabel("tokens") }) as Plugin,
    maxDepthPlugin({ n: GRAPHQL_LIMITS.maxDepth, flattenFragments: true, ...relabel("depth") }) as Plugin,
    maxAliasesPlugin({ n: GRAPHQL_LIMITS.maxAliases, ...relabel("aliases") }) as Plugin,
    maxDirectivesPlugin({ n: GRAPHQL_LIMITS.maxDirectives, ...relabel("directives") }) as Plugin,
    {
      onValidate: ({ addValidationRule, context }) => {
        if (!isRestDocument((context as { params?: { query?: string } }).params?.query)) addValidationRule(costRule());
      },
    },
    blockFieldSuggestionsPlugin({ mask: "" }) as Plugin,
    // Yoga labels the schema's own validation errors GRAPHQL_VALIDATION_FAILED; the project's code is validation_error
    // (errors.ts projectErrorCode, the one table of Yoga's codes, which maskError uses too). Relabelled once the
    // operation's result is known (Yoga adds its label after every plugin's validation hook), which is also where an
    // operation run in process ends (the REST adapter: rest/router.ts), and again as the answer is written, for
    // the errors of the HTTP request itself (a body that is not JSON, a wrong method)
    {
      onExecutionResult: ({ result }) => relabelErrorCodes(result),
      onResultProcess: ({ result }) => relabelErrorCodes(result),
    },
  ];
}

/** Yoga's upper-case error codes of a result (or a batch of results) as the project's (errors.ts projectErrorCode). */
function relabelErrorCodes(result: unknown): void {
  if (!result || typeof result !== "object" || Symbol.asyncIterator in result) return;
  for (const one of Array.isArray(result) ? result : [result]) {
    if (!one || !("errors" in one)) continue;
    for (const error of (one as { errors?: readonly GraphQLError[] }).errors ?? []) {
      const code = error.extensions?.code;
      if (typeof code !== "string") continue;
      const status = (error.extensions.http as { status?: number } | undefined)?.status;
      (error.extensions as Record<string, unknown>).code = projectErrorCode(code, status);
    }
  }
}

/** Deadline (performance.now() ms) of each running query operation, by its context object. */
const deadlines = new WeakMap<object, number>();
const budgets = new WeakMap<object, number>();
const wrapped = new WeakSet<GraphQLSchema>();

function timeoutError(budgetMs: number): GraphQLError {
  return new GraphQLError(
    `The query ran longer than its time budget of ${budgetMs} ms and was stopped; ask for less (fewer items or ` +
      `fields) or split it.`,
    {
      extensions: { code: "request_timeout" },
    },
  );
}

/**
 * Makes every resolver of `schema` (in place, once) check its operation's deadline before it runs:
 * past it, the field is not resolved. Fields without a deadline (mutations, and every operation
 * outside `timeBudgetPlugin`) are unaffected.
 */
export function enforceDeadlines(schema: GraphQLSchema): void {
  if (wrapped.has(schema)) return;
  wrapped.add(schema);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      const resolve = field.resolve ?? defaultFieldResolver;
      if (!field.resolve) continue; // plain property reads do no work
      field.resolve = (source, args, context, info) => {
        const deadline = deadlines.get(context as object);
        if (deadline !== undefined && performance.now() > deadline) throw timeoutError(budgets.get(context as object)!);
        return resolve(source, args, context, info);
      };
    }
  }
}

/**
 * The time budget of a query operation: `budgetMs` after execution starts, resolvers not yet
 * started are skipped (enforceDeadlines) and the answer is the `request_timeout` error alone, sent
 * at once. Mutations are not cut short: each is one transaction, and stopping the answer after it
 * committed would report a failure for a change that happened.
 */
export function timeBudgetPlugin(budgetMs: number): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = args.document.definitions.find(
        (d: DefinitionNode) =>
          d.kind === Kind.OPERATION_DEFINITION && (!args.operationName || d.name?.value === args.operationName),
      );
      if (!operation || operation.kind !== Kind.OPERATION_DEFINITION || operation.operation !== "query") return;
      const context = args.contextValue as object;
      deadlines.set(context, performance.now() + budgetMs);
      budgets.set(context, budgetMs);
      setExecuteFn(async (executeArgs) => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), budgetMs)));
        try {
          const result = await Promise.race([executeFn(executeArgs), late]);
          // a result that a resolver cut short is replaced by the one timeout error
          const cut =
            result === "late" ||
            ("errors" in result && result.errors?.some((e: GraphQLError) => e.extensions?.code === "request_timeout"));
          if (cut) return { data: null, errors: [timeoutError(budgetMs)] };
          return result;
        } finally {
          clearTimeout(timer);
        }
      });
    },
  };
}
