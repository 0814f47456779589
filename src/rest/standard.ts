/**
 * The standard routes' operations by rule (docs/rest.md "How the REST adapter is declared"): for
 * each standard shape of each declaration, the operation resources.ts `operationName` names, unless
 * src/rest/operations writes one of that name by hand. Its root field is the shape's mutation
 * (`createCreditNote`, or the declaration's `roots`), `node(id)` (retrieve, pdf) or the list's
 * connection (`creditNotes`); its variables are the root field's arguments (a list's: paging by
 * `first` and `offset`, its filters) and, beside the fragment, each `?expand=` name's
 * (`$expandInvoice`); its selection is the resource's fragment (`CreditNoteFields`), a pdf's `pdf`,
 * a delete's `__typename` (it answers 204, nothing of the result is read). Pure: the declarations
 * and the schema in, GraphQL text out (scripts/rest-operations.ts writes it for graphql-codegen).
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

/** The operation of `shape` on `decl`, by the rule (one line; `standardOperations` prints it). */
function operation(schema: GraphQLSchema, decl: ResourceDecl, shape: Shape): string {
  const mutation = !["retrieve", "pdf", "list"].includes(shape);
  const root = rootName(decl, shape);
  const field = (mutation ? schema.getMutationType() : schema.getQueryType())?.getFields()[root];
  if (!field) throw new Error(`${decl.name} ${shape}: no root field ${root} in the schema`);
  const args = field.args.filter((a) => shape !== "list" || !CURSORS.has(a.name));
  // the fragment's `?expand=` variables, where it is selected
  const expand = shape === "pdf" || shape === "delete" ? [] : (decl.expand ?? []);
  const variables = [
    ...args.map((a) => `$${a.name}: ${a.type.toString()}`),
    ...expand.map((name) => `$expand${pascal(name)}: Boolean!`),
  ];
  const call = args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(", ")})` : "";
  const declared = variables.length ? `(${variables.join(", ")})` : "";
  const kind = mutation ? "mutation" : "query";
  return `${kind} ${operationName(decl, shape)}${declared} { ${root}${call} { ${selection(decl, shape)} } }`;
}

/** Every standard operation of `decls` that `written` (the names of the hand-written ones) lacks, as GraphQL text. */
export function standardOperations(schema: GraphQLSchema, written: Set<string>, decls = RESOURCES): string {
  const operations = decls.flatMap((decl) =>
    decl.shapes.filter((shape) => !written.has(operationName(decl, shape))).map((s) => operation(schema, decl, s)),
  );
  return operations.length ? print(parse(operations.join("\n"))) : "";
}
