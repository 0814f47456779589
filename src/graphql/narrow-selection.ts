/**
 * The columns a GraphQL selection needs, instead of every column of every row it loads
 * (docs/performance.md "After: the GraphQL page of 50").
 *
 * Our prismaObjects are in Pothos' include mode: `queryFromInfo` plans `{ include: { customer: ...,
 * lines: ... } }`, and every row is read with all its scalar columns, because a field's resolver may
 * read any of them. For a page of 50 invoices with customer, country, lines and payments that was
 * 165 KB of JSON from PostgreSQL to parse, about 1,100 decimals and 1,300 dates to convert, for a
 * 30 KB answer.
 *
 * `narrowSelection` turns such a plan into a `select` of the columns the selected fields read, level
 * by level, where it can tell what they read: a field that exposes a column (`t.expose*`), a
 * relation (`t.relation`, narrowed in turn), a field that declares the columns it needs (`select:
 * { status: true }`), the Node `id`, `__typename`. Any other field at a level (a resolver that may
 * read anything) keeps that level, and what is below it, as Pothos planned it. Each level also keeps
 * its model's `id`, which Pothos' fallback loaders find a row by.
 */
import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getDirectiveValues,
  getNamedType,
  isObjectType,
  typeFromAST,
  type FieldNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from "graphql";
import { getDatamodel } from "../infra/prisma/generated/pothos-types.js";

type Args = Record<string, unknown>;

const models = new Map(
  Object.entries(
    getDatamodel().datamodel.models as unknown as Record<
      string,
      { fields: readonly { name: string; kind: string; isId?: boolean }[] }
    >,
  ).map(([name, m]) => [
    name,
    {
      scalars: new Set(m.fields.filter((f) => f.kind !== "object").map((f) => f.name)),
      hasId: m.fields.some((f) => f.name === "id" && f.isId),
    },
  ]),
);

/** What a field of a prismaObject needs of its row, or null when it cannot be told. */
type Need = { columns: string[] } | { relation: string; field: GraphQLField<unknown, unknown> } | null;

const needs = new WeakMap<GraphQLField<unknown, unknown>, Need>();

/** The columns a Node type's id resolver reads (a probe of its own resolver), or null. */
function nodeIdColumns(type: GraphQLObjectType, scalars: Set<string>): string[] | null {
  const own = (type.extensions as { pothosOptions?: { id?: { resolve?: unknown } } }).pothosOptions?.id?.resolve;
  if (typeof own !== "function") return null;
  const read = new Set<string>();
  const probe = new Proxy({}, { get: (_target, key) => (typeof key === "string" && read.add(key), "x") });
  try {
    if (typeof own(probe, {}, {}, {}) !== "string") return null;
  } catch {
    return null;
  }
  const columns = [...read];
  return columns.length > 0 && columns.every((c) => scalars.has(c)) ? columns : null;
}

function needOf(type: GraphQLObjectType, field: GraphQLField<unknown, unknown>, scalars: Set<string>): Need {
  if (needs.has(field)) return needs.get(field)!;
  const ext = field.extensions as {
    pothosExposedField?: unknown;
    pothosPrismaRelationField?: { name?: unknown };
    pothosPrismaSelect?: unknown;
  };
  let need: Need = null;
  const select = ext.pothosPrismaSelect;
  if (typeof ext.pothosExposedField === "string" && scalars.has(ext.pothosExposedField) && !select)
    need = { columns: [ext.pothosExposedField] };
  else if (ext.pothosPrismaRelationField && typeof ext.pothosPrismaRelationField.name === "string")
    need = { relation: ext.pothosPrismaRelationField.name, field };
  else if (select && typeof select === "object" && !Array.isArray(select)) {
    const entries = Object.entries(select);
    if (entries.every(([key, value]) => value === true && scalars.has(key)))
      need = { columns: entries.map(([key]) => key) };
  } else if (field.name === "id" && type.getInterfaces().some((i) => i.name === "Node") && !select)
    need = nodeIdColumns(type, scalars) ? { columns: nodeIdColumns(type, scalars)! } : null;
  needs.set(field, need);
  return need;
}

/** The fields a selection asks of `type` (fragments flattened, @skip/@include applied), by field name. */
function collectFields(
  info: GraphQLResolveInfo,
  type: GraphQLObjectType,
  sets: readonly SelectionSetNode[],
  out = new Map<string, FieldNode[]>(),
  seen = new Set<string>(),
): Map<string, FieldNode[]> {
  for (const set of sets) {
    for (const node of set.selections) {
      if (getDirectiveValues(GraphQLSkipDirective, node, info.variableValues)?.if === true) continue;
      if (getDirectiveValues(GraphQLIncludeDirective, node, info.variableValues)?.if === false) continue;
      if (node.kind === Kind.FIELD) {
        const list = out.get(node.name.value) ?? [];
        list.push(node);
        out.set(node.name.value, list);
        continue;
      }
      const fragment =
        node.kind === Kind.INLINE_FRAGMENT
          ? node
          : seen.has(node.name.value)
            ? undefined
            : (seen.add(node.name.value), info.fragments[node.name.value]);
      if (!fragment) continue;
      const condition = fragment.typeCondition ? typeFromAST(info.schema, fragment.typeCondition) : type;
      if (!condition) continue;
      const applies =
        condition === type ||
        (!isObjectType(condition) &&
          info.schema.isSubType(condition as Parameters<typeof info.schema.isSubType>[0], type));
      if (applies) collectFields(info, type, [fragment.selectionSet], out, seen);
    }
  }
  return out;
}

/**
 * The Prisma arguments `args` (an include-mode plan of `type`'s model) with a `select` of what
 * `sets` read, or `args` itself where that cannot be told (module comment).
 */
function narrow(
  info: GraphQLResolveInfo,
  type: GraphQLObjectType,
  sets: readonly SelectionSetNode[],
  args: Args,
): Args {
  const modelName = (type.extensions as { pothosPrismaModel?: unknown }).pothosPrismaModel;
  const model = typeof modelName === "string" ? models.get(modelName) : undefined;
  const typeExt = type.extensions as { pothosPrismaInclude?: unknown; pothosPrismaSelect?: unknown };
  if (!model || !model.hasId || args.select !== undefined || typeExt.pothosPrismaInclude || typeExt.pothosPrismaSelect)
    return args;
  const include = (args.include ?? {}) as Args;
  const select: Args = { id: true };
  const relations = new Set<string>();
  const fields = type.getFields();
  for (const [name, nodes] of collectFields(info, type, sets)) {
    if (name === "__typename") continue;
    const field = fields[name];
    const need = field ? needOf(type, field, model.scalars) : null;
    if (!need) return args;
    if ("columns" in need) {
      for (const column of need.columns) select[column] = true;
      continue;
    }
    // one relation asked once (aliases of it with other arguments: Pothos plans those its own way)
    const planned = include[need.relation];
    const target = getNamedType(need.field.type);
    if (planned === undefined || relations.has(need.relation) || !isObjectType(target)) return args;
    if (new Set(nodes.map((n) => n.alias?.value ?? n.name.value)).size > 1) return args;
    relations.add(need.relation);
    const sub = nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
    const nested = narrow(info, target, sub, planned === true ? {} : (planned as Args));
    select[need.relation] =
      nested.include === undefined && nested.select === undefined && planned === true ? true : nested;
  }
  // a relation planned by something else than the fields read here (another field's `select`)
  if (Object.keys(include).some((key) => !relations.has(key))) return args;
  const { include: _include, ...rest } = args;
  return { ...rest, select };
}

/**
 * `query` (what Pothos' `queryFromInfo` planned for the objects at `path` below the field `info`
 * resolves, e.g. a connection's `["edges", "node"]`) with a `select` of the columns the selection reads
 * (module comment); `query` itself when it cannot be told, and when it has no relations (a flat read,
 * whose JSON PostgreSQL does not build: its rows are read as Prisma reads them).
 */
export function narrowSelection(info: GraphQLResolveInfo, path: readonly string[], query: Args): Args {
  // a plan without relations is Prisma's own flat read, not a joined one: left as planned
  const include = query.include as Args | undefined;
  if (!include || Object.keys(include).length === 0) return query;
  let type = getNamedType(info.returnType);
  let nodes: readonly FieldNode[] = info.fieldNodes;
  for (const key of path) {
    if (!isObjectType(type)) return query;
    const sets = nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
    const next = collectFields(info, type, sets).get(key);
    const field = type.getFields()[key];
    if (!next || !field) return query;
    nodes = next;
    type = getNamedType(field.type);
  }
  if (!isObjectType(type)) return query;
  return narrow(
    info,
    type,
    nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : [])),
    query,
  );
}
