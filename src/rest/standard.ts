/**
 * The routes' operations by rule (docs/rest.md "How the REST adapter is declared"), each unless
 * src/rest/operations writes one of its name by hand. A standard shape's operation is the one
 * resources.ts `operationName` names: its root field is the shape's mutation (`createCreditNote`,
 * or the declaration's `roots`), `node(id)` (retrieve, pdf) or the list's connection
 * (`creditNotes`); its variables are the root field's arguments (a list's: paging by `first` and
 * `offset`, its filters) and, beside the fragment, each `?expand=` name's (`$expandInvoice`); its
 * selection is the resource's fragment (`CreditNoteFields`), a pdf's `pdf`, a delete's `__typename`
 * (it answers 204, nothing of the result is read). A special route's operation (`RestCancelSubscription`)
 * is the root field its name names after `Rest` (`cancelSubscription`), with all its arguments,
 * selecting the resource's fragment. Pure: the declarations and the schema in, GraphQL text out
 * (scripts/rest-operations.ts writes it for graphql-codegen).
 */
import { parse, print, type GraphQLSchema } from "graphql";
import { operationName, pascal, RESOURCES } from "./resources.js";
import type { ResourceDecl, Shape } from "./types.js";

/** The connection arguments a REST list does not use (it pages by `first` and `offset`). */
const CURSORS = new Set(["after", "before", "last"]);

/** The root field of `shape` on `decl`: the declared one, else the rule's (a list's: its operation's plural noun). */
function rootName(decl: ResourceDecl, shape: Shape): string {
  const plural = operationName(decl, "list").slice("Rest".length);
  if (decl.roots?.[shape]) return decl.roots[shape];
  if (shape === "retrieve" || shape === "pdf") return "node";
  return shape === "list" ? `${plural[0].toLowerCase()}${plural.slice(1)}` : `${shape}${pascal(decl.name)}`;
}

/** The selection of `shape`'s root field on `decl`. */
function selection(decl: ResourceDecl, shape: Shape): string {
  const fields = `...${decl.typename}Fields`;
  if (shape === "retrieve") return `__typename ${fields}`;
  if (shape === "pdf") return `__typename ... on ${decl.typename} { pdf }`;
  if (shape === "list") return `totalCount edges { node { ${fields} } }`;
  return shape === "delete" ? "__typename" : fields;
}

/**
 * An operation's text (one line; `standardOperations` prints it): `root`'s arguments (a list's less
 * the cursors) as its variables.
 */
function operationText(schema: GraphQLSchema, name: string, decl: ResourceDecl, root: string, shape?: Shape): string {
  const mutation = shape ? !["retrieve", "pdf", "list"].includes(shape) : !schema.getQueryType()?.getFields()[root];
  const field = (mutation ? schema.getMutationType() : schema.getQueryType())?.getFields()[root];
  if (!field) throw new Error(`${decl.name} ${shape ?? name}: no root field ${root} in the schema`);
  const args = field.args.filter((a) => shape !== "list" || !CURSORS.has(a.name));
  // the fragment's `?expand=` variables, where it is selected
  const expand = shape === "pdf" || shape === "delete" ? [] : (decl.expand ?? []);
  const variables = [
    ...args.map((a) => `$${a.name}: ${a.type.toString()}`),
    ...expand.map((name) => `$expand${pascal(name)}: Boolean!`),
  ];
  const call = args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(", ")})` : "";
  const declared = variables.length ? `(${variables.join(", ")})` : "";
  const body = shape ? selection(decl, shape) : `...${decl.typename}Fields`;
  return `${mutation ? "mutation" : "query"} ${name}${declared} { ${root}${call} { ${body} } }`;
}

/** The root field a special route's operation names (`RestCancelSubscription` -> `cancelSubscription`). */
const namedRoot = (operation: string) => `${operation[4].toLowerCase()}${operation.slice(5)}`;

/** Every operation of `decls`' routes that `written` (the names of the hand-written ones) lacks, as GraphQL text. */
export function standardOperations(schema: GraphQLSchema, written: Set<string>, decls = RESOURCES): string {
  const operations = decls.flatMap((decl) => [
    ...decl.shapes
      .map((shape) => ({ shape, name: operationName(decl, shape) }))
      .filter(({ name }) => !written.has(name))
      .map(({ shape, name }) => operationText(schema, name, decl, rootName(decl, shape), shape)),
    ...(decl.special ?? [])
      .flatMap((route) => (route.operation && !written.has(route.operation) ? [route.operation] : []))
      .map((name) => operationText(schema, name, decl, namedRoot(name))),
  ]);
  return operations.length ? print(parse(operations.join("\n"))) : "";
}
