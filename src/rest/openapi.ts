/**
 * The OpenAPI 3.1 document of the REST surface (docs/rest.md "OpenAPI, the reference page and the
 * contract test"), written from the same declarations the router runs (resources.ts): every path
 * and method, path and query parameters (paging, filters), request bodies (their checked schemas),
 * responses and the error shape. A resource's schema is derived from its GraphQL operation's
 * selection by rule (snake_case names, `Decimal` as a JSON number, an object selecting only `id`
 * as that id, nullable unless non-null); only the spec's exceptions are written out, in
 * printer.ts `EXCEPTIONS`, the table the printer runs. Served at `GET /v1/openapi.json`, committed as
 * schema/openapi.json.
 */
import {
  getNamedType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLOutputType,
  type GraphQLNullableType,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import { z } from "zod";
import { schema as graphqlSchema } from "../graphql/schema.js";
import { restEnumValues } from "./enums.js";
import { EXCEPTIONS, snake } from "./printer.js";
import { RESOURCES, SHAPES } from "./resources.js";
import { STATUS_BY_CODE } from "./respond.js";
import type { Method, Operation, ResourceDecl, Shape, SpecialRoute } from "./types.js";

type Json = Record<string, unknown>;

/** The fragments printed as shared components while a document is built (name -> schema). */
let shared: Map<string, Json> | undefined;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Json): Json => ({ anyOf: [schema, { type: "null" }] });
const pascal = (name: string) => name.replace(/(^|[ _])(\w)/g, (_m, _s, c: string) => c.toUpperCase());

/** JSON Schema of each GraphQL scalar as REST prints it (docs/rest.md "Formats"). */
const SCALARS: Record<string, Json> = {
  ID: { type: "string" },
  String: { type: "string" },
  Int: { type: "integer" },
  Float: { type: "number" },
  Boolean: { type: "boolean" },
  Decimal: { type: "number", description: "exact decimal, printed as a JSON number" },
  Date: { type: "string", format: "date", description: "yyyy-mm-dd" },
  DateTime: { type: "string", description: "`yyyy-mm-dd hh:mm:ss` (UTC) or ISO 8601 with offset, per resource" },
  JSONObject: { type: "object" },
};

/** The printed exceptions' schemas (printer.ts `EXCEPTIONS`, the table the printer runs), by type and field. */
const EXCEPTION_SCHEMAS: Record<string, Json> = Object.fromEntries(
  Object.entries(EXCEPTIONS).map(([type, fields]) => [
    type,
    Object.fromEntries(Object.entries(fields).flatMap(([f, e]) => (e.schema ? [[f, e.schema]] : []))),
  ]),
);

/** Every fragment of `doc`, by name. */
function fragmentsOf(doc: Operation): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  return fragments;
}

/** JSON Schema of `type` with `selection` (a REST-printed GraphQL value): nullable unless non-null. */
function typeSchema(
  type: GraphQLOutputType,
  selection: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
): Json {
  if (!isNonNullType(type)) return nullable(valueSchema(type, selection, fragments));
  return valueSchema(type.ofType, selection, fragments);
}

function valueSchema(
  type: GraphQLNullableType & GraphQLOutputType,
  selection: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
): Json {
  if (isListType(type))
    return { type: "array", items: typeSchema(type.ofType as GraphQLOutputType, selection, fragments) };
  if (isScalarType(type)) return SCALARS[type.name] ?? {};
  if (isEnumType(type)) return { type: "string", enum: restEnumValues(type.name) };
  const fields = selectedFields(selection, fragments);
  if (fields.length === 1 && fields[0].name === "id") return { type: "string", description: "the id" };
  const only = selection?.selections.length === 1 ? selection.selections[0] : undefined;
  if (only?.kind === Kind.FRAGMENT_SPREAD && shared) {
    // a whole fragment (`...CurrencyFields`): one shared component, referenced
    const name = only.name.value.replace(/Fields$/, "");
    if (!shared.has(name)) {
      shared.set(name, {});
      shared.set(name, objectSchema(getNamedType(type).name, selection, fragments));
    }
    return ref(name);
  }
  return objectSchema(getNamedType(type).name, selection, fragments);
}

/** The fields `selection` selects (through fragment spreads and inline fragments), `__typename` left out. */
function selectedFields(selection: SelectionSetNode | undefined, fragments: Map<string, FragmentDefinitionNode>) {
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

/** The object schema of a GraphQL object type's selection, by rule plus `EXCEPTIONS`. */
function objectSchema(
  typename: string,
  selection: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
): Json {
  const type = graphqlSchema.getType(typename);
  if (!isObjectType(type)) return { type: "object" };
  const properties: Json = {};
  for (const field of selectedFields(selection, fragments)) {
    const def = type.getFields()[field.name];
    if (!def || EXCEPTIONS[typename]?.[field.name]?.renamed) continue;
    const schema = typeSchema(def.type, field.selection, fragments);
    properties[snake(field.key)] = def.description ? { ...schema, description: def.description } : schema;
  }
  return { type: "object", properties: { ...properties, ...(EXCEPTION_SCHEMAS[typename] ?? {}) } };
}

/** The resource's printed schema, derived from the selection of its first standard operation. */
function resourceSchema(decl: ResourceDecl): Json {
  const doc = decl.ops.retrieve ?? decl.ops.create ?? decl.ops.list ?? decl.ops.update;
  if (!doc) return { type: "object", description: decl.description };
  const fragments = fragmentsOf(doc);
  const operation = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const root = operation?.selectionSet.selections[0];
  let selection = root?.kind === Kind.FIELD ? root.selectionSet : undefined;
  if (doc === decl.ops.list) {
    // a connection: edges { node { ... } }
    const edges = selectedFields(selection, fragments).find((f) => f.name === "edges");
    selection = selectedFields(edges?.selection, fragments).find((f) => f.name === "node")?.selection;
  }
  return { ...objectSchema(decl.typename, selection, fragments), description: decl.description };
}

const ERROR_SCHEMA: Json = {
  type: "object",
  description: 'Every error (DESIGN.md\'s error shape; docs/rest.md "Responses")',
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", enum: [...Object.keys(STATUS_BY_CODE), "payload_too_large", "internal_error"] },
        message: { type: "string", description: "at most 200 characters of input are quoted" },
        fields: {
          type: "object",
          description: "reasons per field, by the spec's snake_case path (`lines.0.quantity`)",
          additionalProperties: { type: "array", items: { type: "string" } },
        },
      },
    },
  },
  example: { error: { code: "validation_error", message: "Invalid request body", fields: { name: ["required"] } } },
};

const json = (schema: Json) => ({ "application/json": { schema } });
const ERRORS = {
  "400": { description: "validation_error (or query_too_complex)", content: json(ref("Error")) },
  "401": { description: "authentication_required", content: json(ref("Error")) },
  "404": { description: "not_found", content: json(ref("Error")) },
  "4XX": { description: "another client error (403, 405, 409, 413, 422, 429)", content: json(ref("Error")) },
  "5XX": {
    description: "service_unavailable, request_timeout (with Retry-After) or internal_error",
    content: json(ref("Error")),
  },
};

const PAGE_PARAMS = [
  {
    name: "page",
    in: "query",
    description: "page number, from 1",
    schema: { type: "integer", minimum: 1 },
    example: 1,
  },
  {
    name: "page_size",
    in: "query",
    description: "items per page (default 20)",
    schema: { type: "integer", minimum: 1, maximum: 100 },
    example: 20,
  },
];

/** Query parameters of a list: paging, then each filter with the operators it takes. */
function filterParams(decl: ResourceDecl): Json[] {
  const filters = Object.entries(decl.filters ?? {}).map(([name, f]) => ({
    name,
    in: "query",
    description: {
      string:
        `equals; also \`${name}__exact\`, \`${name}__in\` (comma-separated), ` +
        `\`${name}__contains\`, \`${name}__icontains\``,
      datetime: `a date (the whole day) or an ISO timestamp; also \`${name}__gte\`, \`${name}__lte\``,
      boolean: "`true` or `false`",
      enum: `one value; also \`${name}__in\` (comma-separated)`,
    }[f.kind],
    schema: f.kind === "enum" ? { type: "string", enum: restEnumValues(f.enum!) } : { type: "string" },
  }));
  return [...PAGE_PARAMS, ...filters];
}

const pathParams = (path: string) =>
  [...path.matchAll(/:([a-z]+)/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    description: name === "id" ? "the resource id (`<prefix>_<24 base62>`)" : `the ${name}`,
    schema: { type: "string" },
  }));

const IDEMPOTENCY = {
  name: "Idempotency-Key",
  in: "header",
  description: "runs the POST once per key (1 to 255 characters); the same key replays the first answer",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

/** JSON Schema of a checked body (zod's schema as the request's input). */
function bodySchema(schema: z.ZodType): Json {
  const body = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Json;
  delete body.$schema; // the document's dialect is OpenAPI 3.1's
  return body;
}

const SHAPE_ANSWERS: Record<Shape, { status: string; description: string; schema?: (name: string) => Json }> = {
  create: { status: "201", description: "created", schema: (n) => ref(n) },
  retrieve: { status: "200", description: "the resource", schema: (n) => ref(n) },
  update: { status: "200", description: "the updated resource", schema: (n) => ref(n) },
  finalize: { status: "200", description: "the finalized resource", schema: (n) => ref(n) },
  delete: { status: "204", description: "deleted (or archived when in use)" },
  pdf: { status: "200", description: "the PDF in Base64", schema: () => ref("Pdf") },
  list: {
    status: "200",
    description: "a page",
    schema: (n) => ({
      type: "object",
      required: ["count", "next", "previous", "results"],
      properties: {
        count: { type: "integer" },
        next: { type: ["string", "null"], format: "uri" },
        previous: { type: ["string", "null"], format: "uri" },
        results: { type: "array", items: ref(n) },
      },
    }),
  },
};

const SUMMARY: Record<Shape, string> = {
  create: "Create",
  retrieve: "Retrieve",
  update: "Update",
  list: "List",
  delete: "Delete",
  pdf: "PDF of",
  finalize: "Finalize",
};

const toOpenApiPath = (path: string) => `${path.replace(/:([a-z]+)/g, "{$1}")}/`;

/** The answer of a special route as an OpenAPI response map. */
function specialAnswers(s: SpecialRoute, name: string): Json {
  const answers = s.answers ?? { status: 200, schema: "resource" as const };
  const schema = answers.schema;
  if (schema === "none") return { [answers.status]: { description: "no content" } };
  if (schema === "pdf")
    return {
      [answers.status]: {
        description: "the file's bytes",
        content: { "*/*": { schema: { type: "string", format: "binary" } } },
      },
    };
  const body =
    schema === "resource"
      ? ref(name)
      : schema === "array"
        ? { type: "array", items: ref(name) }
        : { allOf: [ref(name), { type: "object", properties: schema }] };
  const statuses = s.method === "POST" && s.path === "" && name === "Usage" ? ["200", "201"] : [String(answers.status)];
  return Object.fromEntries(statuses.map((status) => [status, { description: s.summary, content: json(body) }]));
}

/** Builds the OpenAPI 3.1 document from the declarations (deterministic: the committed file compares equal). */
export function openApiDocument(): Json {
  shared = new Map();
  const paths: Record<string, Record<string, Json>> = {};
  const schemas: Json = {
    Error: ERROR_SCHEMA,
    Pdf: { type: "object", required: ["file"], properties: { file: { type: "string", contentEncoding: "base64" } } },
  };
  const add = (method: Method, path: string, op: Json) => {
    (paths[toOpenApiPath(path)] ??= {})[method.toLowerCase()] = op;
  };
  for (const decl of RESOURCES) {
    const name = pascal(decl.name);
    schemas[name] = resourceSchema(decl);
    for (const shape of Object.keys(decl.ops) as Shape[]) {
      const { method, suffix } = SHAPES[shape];
      const answer = SHAPE_ANSWERS[shape];
      const path = decl.path + suffix;
      const takesBody = (shape === "create" || shape === "update") && decl.body;
      add(method, path, {
        operationId: `${shape}${name}`,
        tags: [decl.tag],
        summary: `${SUMMARY[shape]} ${/^[aeiou]/i.test(decl.name) ? "an" : "a"} ${decl.name}`,
        description: decl.description,
        parameters: [
          ...pathParams(path),
          ...(shape === "list" ? filterParams(decl) : []),
          ...(decl.expand
            ? [
                {
                  name: "expand",
                  in: "query",
                  description: "print these references as objects",
                  schema: { type: "string", enum: [...decl.expand] },
                },
              ]
            : []),
          ...(method === "POST" ? [IDEMPOTENCY] : []),
        ],
        ...(takesBody ? { requestBody: { required: true, content: json(bodySchema(decl.body!.schema)) } } : {}),
        responses: {
          [answer.status]: {
            description: answer.description,
            ...(answer.schema ? { content: json(answer.schema(name)) } : {}),
          },
          ...ERRORS,
        },
      });
    }
    for (const s of decl.special ?? []) {
      const path = decl.path + s.path;
      add(s.method, path, {
        operationId: `${s.method.toLowerCase()}${pascal(
          path
            .replace(/^\/v1\//, "")
            .replace(/[/:]+/g, " ")
            .trim(),
        )}`,
        tags: [decl.tag],
        summary: s.summary,
        description: decl.description,
        parameters: [
          ...pathParams(path),
          ...Object.entries(s.query ?? {}).map(([q, description]) => ({
            name: q,
            in: "query",
            description,
            schema: { type: "string" },
          })),
          ...(s.method === "POST" ? [IDEMPOTENCY] : []),
        ],
        ...(s.body ? { requestBody: { required: true, content: json(bodySchema(s.body)) } } : {}),
        responses: { ...specialAnswers(s, name), ...ERRORS },
      });
    }
  }
  for (const [name, schema] of shared) schemas[name] ??= schema;
  shared = undefined;
  // a resource printed only as bytes (files) has no schema of its own
  const used = JSON.stringify([paths, schemas]);
  for (const name of Object.keys(schemas)) if (!used.includes(`"#/components/schemas/${name}"`)) delete schemas[name];
  return {
    openapi: "3.1.0",
    info: {
      title: "Billing service REST API",
      version: "1",
      description:
        "The REST surface of the billing service under `/v1` (docs/rest.md, docs/rest-api.md): the same schema, " +
        "rules and errors as GraphQL at `/graphql`. Generated from src/rest/resources.ts.",
    },
    servers: [{ url: "/", description: "this service" }],
    security: [{ bearer: [] }],
    tags: [...new Set(RESOURCES.map((d) => d.tag))].map((tag) => ({ name: tag, description: `${tag} (docs/rest.md)` })),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "an API key, `sk_test_...` or `sk_live_...`" },
      },
      schemas,
    },
  };
}
