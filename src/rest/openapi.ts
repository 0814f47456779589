/**
 * The OpenAPI 3.1 document of the REST surface (docs/rest.md "OpenAPI, the reference page and the
 * contract test"), written from the same declarations the router runs (resources.ts): every path
 * and method, path and query parameters (paging, filters), request bodies (derived from the GraphQL
 * input by input.ts's rule), responses and the error shape. A resource's schema is derived from its GraphQL operation's
 * selection by rule (snake_case names, `Decimal` as a JSON number, an object selecting only `id`
 * as that id, nullable unless non-null); only the spec's exceptions are written out, in
 * printer.ts `EXCEPTIONS`, the table the printer runs. Served at `GET /v1/openapi.json`, committed as
 * schema/openapi.json.
 *
 * Every text in it (the introduction, tags, operations, schemas, and the GraphQL descriptions it
 * reuses) is read on /docs by API users: it says what it means in words and names no file of this
 * repository (test/openapi.test.ts checks).
 */
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type GraphQLInputType,
  type GraphQLNullableType,
  type GraphQLOutputType,
  type SelectionSetNode,
} from "graphql";
import { schema as graphqlSchema } from "../graphql/schema.js";
import { restEnumValues } from "./enums.js";
import { listFilters, type FilterKind } from "./filters.js";
import { bodyOf, type BodyField, type BodyObject } from "./input.js";
import {
  EXCEPTIONS,
  operationNamed,
  plainTimestamps,
  printedFields,
  restName,
  rootOf,
  selectedFields,
  type Fragments,
} from "./printer.js";
import { operationName, RESOURCES, routesOf, TAG_DESCRIPTIONS } from "./resources.js";
import { STATUS_BY_CODE } from "./respond.js";
import { EVENT_OBJECT_TYPES } from "./event-objects.js";
import type { Operation, ResourceDecl, Route } from "./types.js";
import {
  EVENT_TYPE_NAMES,
  EVENT_TYPES,
  eventObjectKinds,
  type EventObjectKind,
  type EventType,
} from "../domain/events.js";

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
  Decimal: { type: "number", description: "exact decimal, printed as a JSON number", example: 11900 },
  Date: { type: "string", format: "date", description: "yyyy-mm-dd", example: "2026-12-07" },
  // an object's timestamps take one of TIMESTAMPS' forms (objectSchema)
  DateTime: { type: "string", description: "`yyyy-mm-dd hh:mm:ss` (UTC) or ISO 8601 with offset, per resource" },
  JSONObject: { type: "object" },
};

/**
 * The two forms the printer writes an instant in (printer.ts `printInstant`): `yyyy-mm-dd hh:mm:ss` in UTC in the
 * spec's invoice, payment and embedded customer (`plainTimestamps`), ISO 8601 with an offset everywhere else.
 */
const TIMESTAMPS = {
  plain: {
    type: "string",
    pattern: "^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$",
    description: "`yyyy-mm-dd hh:mm:ss` in UTC",
    example: "2026-12-07 15:04:05",
  },
  iso: {
    type: "string",
    format: "date-time",
    description: "ISO 8601 with offset",
    example: "2026-12-07T15:04:05.000+00:00",
  },
} as const satisfies Record<string, Json>;

/** `schema` with the DateTime scalar's (also inside anyOf and array items) replaced by timestamp form `form`. */
function timestampsAs(schema: Json, form: Json): Json {
  if (schema === SCALARS.DateTime) return form;
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: schema.anyOf.map((s: Json) => timestampsAs(s, form)) };
  if (schema.items && typeof schema.items === "object")
    return { ...schema, items: timestampsAs(schema.items as Json, form) };
  return schema;
}

/** ... and as a body takes it (docs/rest.md "Requests"), where that differs. */
const INPUT_SCALARS: Record<string, Json> = {
  ...SCALARS,
  Decimal: { type: ["number", "string"], description: "exact decimal: a JSON number or a decimal string" },
  DateTime: { type: "string", format: "date-time", description: "ISO 8601 with offset" },
};

/** The schema `of` a GraphQL type's values, nullable unless the type is non-null (output and input alike). */
function orNull<T extends GraphQLOutputType | GraphQLInputType>(type: T, of: (t: GraphQLNullableType & T) => Json) {
  return isNonNullType(type)
    ? of(type.ofType as GraphQLNullableType & T)
    : nullable(of(type as GraphQLNullableType & T));
}

/** JSON Schema of `type` with `selection` (a REST-printed GraphQL value): nullable unless non-null. */
const typeSchema = (type: GraphQLOutputType, selection: SelectionSetNode | undefined, fragments: Fragments): Json =>
  orNull(type, (t) => valueSchema(t, selection, fragments));

function valueSchema(
  type: GraphQLNullableType & GraphQLOutputType,
  selection: SelectionSetNode | undefined,
  fragments: Fragments,
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

/**
 * The object schema of a GraphQL object type's selection, by rule plus `EXCEPTIONS`: every printed key `required` (the
 * printer writes each, null when the value is) but the exceptions marked `optional`, and no other key
 * (`additionalProperties: false`), so that generated clients type what is always there as such (docs/rest.md
 * "OpenAPI, the reference page and the contract test").
 */
function objectSchema(
  typename: string,
  selection: SelectionSetNode | undefined,
  fragments: Fragments,
  root = false,
): Json {
  const type = graphqlSchema.getType(typename);
  if (!isObjectType(type)) return { type: "object" };
  const properties: Json = {};
  const optional = new Set<string>();
  const timestamps = plainTimestamps(typename, root) ? TIMESTAMPS.plain : TIMESTAMPS.iso;
  for (const field of printedFields(typename, selection, fragments)) {
    const def = type.getFields()[field.name];
    if (!def) continue;
    const schema = timestampsAs(typeSchema(def.type, field.selection, fragments), timestamps);
    const description = EXCEPTIONS[typename]?.[field.name]?.description ?? def.description;
    properties[restName(typename, field.key)] = description ? { ...schema, description } : schema;
  }
  // the printed exceptions' schemas (printer.ts `EXCEPTIONS`, the table the printer runs); one the selection does
  // not print is declared but not required
  for (const [name, exception] of Object.entries(EXCEPTIONS[typename] ?? {})) {
    if (exception.schema && !(name in properties)) optional.add(name);
    if (exception.schema) properties[name] = exception.schema;
    if (exception.optional) optional.add(name).add(restName(typename, name));
  }
  // every key the printer always writes is required (null when the value is), and no other key is printed
  const required = Object.keys(properties).filter((key) => !optional.has(key));
  return { type: "object", properties, required, additionalProperties: false };
}

/**
 * The resource's printed schema: its fragment (`CreditNoteFields`) as its first standard operation (else special
 * one) selects it, or that operation's root field's selection when it has none.
 */
function resourceSchema(decl: ResourceDecl): Json {
  const shape = (["retrieve", "create", "list", "update"] as const).find((s) => decl.shapes.includes(s));
  const name = shape ? operationName(decl, shape) : decl.special?.find((s) => s.operation)?.operation;
  if (!name) return { type: "object", description: decl.description };
  const { node, fragments } = rootOf(operationNamed(name));
  const selection = fragments.get(`${decl.typename}Fields`)?.selectionSet ?? node.selectionSet;
  return { ...objectSchema(decl.typename, selection, fragments, true), description: decl.description };
}

/**
 * JSON Schema of a body (input.ts, the same rule): each input field under its REST name, nullable
 * unless non-null (then required), a field printed as an object also as that object, the keys the
 * resource only prints as `readOnly` (accepted, ignored), no other key.
 */
function bodySchema(object: BodyObject): Json {
  const properties: Json = {};
  const required: string[] = [];
  for (const [name, field] of object.fields) {
    if (isNonNullType(field.type)) required.push(name);
    properties[name] = inputSchema(field.type, field);
  }
  for (const name of object.ignored) properties[name] = { readOnly: true, description: "printed only; ignored" };
  return { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** The JSON body of operation `doc`. */
const requestBody = (doc: Operation) => bodySchema(bodyOf(doc).object);

/** JSON Schema of a body value of input type `type`: nullable unless non-null. */
const inputSchema = (type: GraphQLInputType, field: BodyField): Json => orNull(type, (t) => inputValueSchema(t, field));

function inputValueSchema(type: GraphQLNullableType & GraphQLInputType, field: BodyField): Json {
  if (isListType(type)) return { type: "array", items: inputSchema(type.ofType as GraphQLInputType, field) };
  if (field.object) return bodySchema(field.object);
  const name = getNamedType(type).name;
  const schema = isEnumType(type) ? { type: "string", enum: restEnumValues(name) } : (INPUT_SCALARS[name] ?? {});
  return field.reference ? { anyOf: [schema, { type: "object", properties: { id: schema } }] } : schema;
}

const ERROR_SCHEMA: Json = {
  type: "object",
  description: 'Every error: `{"error": {"code", "message", "fields"}}`, with an HTTP status of 4xx or 5xx',
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
/** The error answers of every operation, by status: their descriptions, the one error shape. */
const ERRORS = Object.fromEntries(
  Object.entries({
    "400": "validation_error (or query_too_complex)",
    "401": "authentication_required",
    "404": "not_found",
    "4XX": "another client error (403, 405, 409, 413, 422, 429)",
    "5XX": "service_unavailable, request_timeout (with Retry-After) or internal_error",
  }).map(([status, description]) => [status, { description, content: json(ref("Error")) }]),
);

/** An OpenAPI parameter. */
const param = (name: string, at: string, description: string, schema: Json, more: Json = {}) => ({
  name,
  in: at,
  description,
  schema,
  ...more,
});

const PAGE = { type: "integer", minimum: 1 };
const PAGE_PARAMS = [
  param("page", "query", "page number, from 1", PAGE, { example: 1 }),
  param("page_size", "query", "items per page (default 20)", { ...PAGE, maximum: 100 }, { example: 20 }),
];

/** The operators each kind of filter takes (filters.ts). */
const FILTER_OPERATORS: Record<FilterKind, (name: string) => string> = {
  string: (n) =>
    `equals; also \`${n}__exact\`, \`${n}__in\` (comma-separated), \`${n}__contains\`, \`${n}__icontains\``,
  datetime: (n) => `a date (the whole day) or an ISO timestamp; also \`${n}__gte\`, \`${n}__lte\``,
  date: (n) => `a date yyyy-mm-dd; also \`${n}__gte\`, \`${n}__lte\` (inclusive)`,
  int: (n) => `a whole number; also \`${n}__in\` (comma-separated)`,
  boolean: () => "`true` or `false`",
  enum: (n) => `one value; also \`${n}__in\` (comma-separated)`,
};

/** Query parameters of a list: paging, then each filter with the operators it takes. */
function filterParams(decl: ResourceDecl): Json[] {
  const filters = Object.entries(listFilters(operationNamed(operationName(decl, "list")), decl.typename).spec);
  return [
    ...PAGE_PARAMS,
    ...filters.map(([name, f]) =>
      param(name, "query", FILTER_OPERATORS[f.kind](name), {
        type: "string",
        ...(f.enum ? { enum: restEnumValues(f.enum) } : {}),
      }),
    ),
  ];
}

const pathParams = (path: string) =>
  [...path.matchAll(/:([a-z]+)/g)].map(([, name]) => {
    const description = name === "id" ? "the resource id (`<prefix>_<24 base62>`)" : `the ${name}`;
    return param(name, "path", description, { type: "string" }, { required: true });
  });

const IDEMPOTENCY = param(
  "Idempotency-Key",
  "header",
  "runs the POST once per key (1 to 255 characters); the same key replays the first answer",
  { type: "string", minLength: 1, maxLength: 255 },
);

const DELETED = { description: "deleted (or archived when in use)" };
const toOpenApiPath = (path: string) => `${path.replace(/:([a-z]+)/g, "{$1}")}/`;

/** What `route` answers: a page, a PDF, the bare array, the resource with more properties, or its operation's value. */
function answerSchema(decl: ResourceDecl, route: Route, name: string): Json {
  const { shape, answers, operation } = route;
  if (answers === "array") return { type: "array", items: ref(name) };
  if (shape === "list")
    return {
      type: "object",
      required: ["count", "next", "previous", "results"],
      properties: {
        count: { type: "integer" },
        next: { type: ["string", "null"], format: "uri" },
        previous: { type: ["string", "null"], format: "uri" },
        results: { type: "array", items: ref(name) },
      },
    };
  if (shape === "pdf") return ref("Pdf");
  if (typeof answers === "object") {
    // the resource's schema with these properties too (it admits no other key, so not an allOf of the two)
    const base = resourceSchema(decl);
    return {
      ...base,
      properties: { ...(base.properties as Json), ...answers },
      required: [...((base.required as string[]) ?? []), ...Object.keys(answers)],
    };
  }
  if (route.alsoAnswers) {
    const other = rootOf(operationNamed(route.alsoAnswers));
    return { oneOf: [ref(name), typeSchema(other.field.type, other.node.selectionSet, other.fragments)] };
  }
  if (shape || !operation) return ref(name);
  // a special route's operation: the resource (or a list of it) by reference, another type by its selection
  const { field, node, fragments } = rootOf(operationNamed(operation));
  const type = getNamedType(field.type).name;
  if (type !== decl.typename) return typeSchema(field.type, node.selectionSet, fragments);
  return isListType(getNullableType(field.type)) ? { type: "array", items: ref(name) } : ref(name);
}

/** The OpenAPI operation of `route` of `decl`. */
function pathOperation(decl: ResourceDecl, route: Route, name: string): Json {
  const path = decl.path + route.path;
  const id = pascal(path.slice("/v1/".length).replace(/[/:]+/g, " "));
  const content =
    route.answers === "file"
      ? { "*/*": { schema: { type: "string", format: "binary" } } }
      : json(answerSchema(decl, route, name));
  const answer = { description: route.summary, content };
  return {
    operationId: route.shape ? `${route.shape}${name}` : `${route.method.toLowerCase()}${id}`,
    tags: [decl.tag],
    summary: route.summary,
    description: decl.description,
    parameters: [
      ...pathParams(path),
      ...(route.shape === "list" ? filterParams(decl) : []),
      ...(decl.expand && route.shape
        ? [param("expand", "query", "print these references as objects", { type: "string", enum: [...decl.expand] })]
        : []),
      ...Object.entries(route.query ?? {}).map(([q, description]) =>
        param(q, "query", description, { type: "string" }),
      ),
      ...(route.method === "POST" ? [IDEMPOTENCY] : []),
    ],
    ...((route.method === "POST" || route.method === "PATCH") && route.operation
      ? { requestBody: { required: true, content: json(requestBody(operationNamed(route.operation))) } }
      : {}),
    responses: {
      ...Object.fromEntries([route.status ?? 200].flat().map((status) => [status, status === 204 ? DELETED : answer])),
      ...ERRORS,
    },
  };
}

/**
 * The reference's introduction (`info.description`, Markdown), for a reader of /docs: what the API
 * is and what every operation has in common. Facts only the REST surface shows; each is tested
 * where it is implemented (authentication, pages, idempotency, errors, limits).
 */
const API_DESCRIPTION = [
  "The billing service's REST API, under `/v1`: customers, invoices, orders, credit notes, payments, " +
    "subscriptions and usage, the catalogue, and issuing Chilean tax documents (DTEs) with SII. It has the same " +
    "data, rules and errors as the GraphQL API at `/graphql`.",
  "**Authentication.** Every operation takes an API key as `Authorization: Bearer <key>`. A key belongs to one " +
    "organization and one mode: `sk_test_...` keys see and change test data only, `sk_live_...` keys live data " +
    "only.",
  "**Requests and answers.** Bodies are JSON; paths work with and without their trailing slash. Money amounts " +
    "are decimal numbers in the document's currency. Lists come a page at a time: each list operation gives its " +
    "paging parameters and the shape of its page.",
  "**Retries.** A POST with an `Idempotency-Key` header runs once per key: the same key sent again gets the " +
    "first answer again, with `Idempotent-Replayed: true`, and changes nothing.",
  '**Errors.** Every error has the shape `{"error": {"code", "message", "fields"}}`: `code` is stable and meant ' +
    "for programs, `message` for people, and `fields` gives the reasons per field of the body or query. Too many " +
    "requests get 429 `rate_limited` with `Retry-After`.",
].join("\n\n");

/**
 * The schema of an event object of `kind`: the component of its GraphQL type (event-objects.ts `EVENT_OBJECT_TYPES`,
 * the types the event printer prints), which is the resource's component of the same name (a missing one fails
 * redocly lint and the tests' schema compile).
 */
const eventObjectSchema = (kind: EventObjectKind): Json => ref(EVENT_OBJECT_TYPES[kind]);

/** How every webhook message is signed, as its description says. */
const SIGNED =
  "Signed with the `webhook-id`, `webhook-timestamp` and `webhook-signature` headers (Standard Webhooks v1).";

/**
 * The webhook messages (OpenAPI 3.1 `webhooks`, docs/webhooks.md "Delivery"): one POST per event type, its body
 * `{type, timestamp, data}` with `data.object` the resource of the type and, on `*.updated`,
 * `data.previous_attributes`; signed with the Standard Webhooks headers. Generated clients type each event's
 * payload from it (clients/typescript).
 */
function webhookMessages(): Json {
  const webhooks: Json = {};
  for (const type of EVENT_TYPE_NAMES) {
    const kinds = eventObjectKinds(type as EventType);
    const object = kinds.length === 1 ? eventObjectSchema(kinds[0]) : { oneOf: kinds.map(eventObjectSchema) };
    const updated = type.endsWith(".updated");
    webhooks[type] = {
      post: {
        operationId: `webhook_${type.replace(/\./g, "_")}`,
        summary: type,
        description: `${EVENT_TYPES[type as EventType]}. ${SIGNED}`,
        security: [],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["type", "timestamp", "data"],
                additionalProperties: false,
                properties: {
                  type: { type: "string", const: type },
                  timestamp: { type: "string", format: "date-time", description: "when the event happened (ISO 8601)" },
                  data: {
                    type: "object",
                    required: updated ? ["object", "previous_attributes"] : ["object"],
                    additionalProperties: false,
                    properties: {
                      object,
                      previous_attributes: {
                        type: "object",
                        description:
                          "the changed fields' old values (on `*.updated`, and on other changes of a resource)",
                      },
                    },
                  },
                },
              },
            },
          },
        },
        responses: { "200": { description: "any 2xx answer within the time limit delivers the message" } },
      },
    };
  }
  return webhooks;
}

/** Builds the OpenAPI 3.1 document from the declarations (deterministic: the committed file compares equal). */
export function openApiDocument(): Json {
  shared = new Map();
  const paths: Record<string, Record<string, Json>> = {};
  const schemas: Json = {
    Error: ERROR_SCHEMA,
    Pdf: { type: "object", required: ["file"], properties: { file: { type: "string", contentEncoding: "base64" } } },
  };
  for (const decl of RESOURCES) {
    const name = pascal(decl.name);
    schemas[name] = resourceSchema(decl);
    for (const route of routesOf(decl)) {
      const path = toOpenApiPath(decl.path + route.path);
      (paths[path] ??= {})[route.method.toLowerCase()] = pathOperation(decl, route, name);
    }
  }
  for (const [name, schema] of shared) schemas[name] ??= schema;
  shared = undefined;
  const webhooks = webhookMessages();
  // a resource printed only as bytes (files) has no schema of its own
  const used = JSON.stringify([paths, schemas, webhooks]);
  for (const name of Object.keys(schemas)) if (!used.includes(`"#/components/schemas/${name}"`)) delete schemas[name];
  return {
    openapi: "3.1.0",
    info: { title: "Billing API", version: "v1", description: API_DESCRIPTION },
    servers: [{ url: "/", description: "this service" }],
    security: [{ bearer: [] }],
    tags: [...new Set(RESOURCES.map((d) => d.tag))].map((tag) => {
      const description = TAG_DESCRIPTIONS[tag];
      if (!description) throw new Error(`tag ${tag} has no description in resources.ts TAG_DESCRIPTIONS`);
      return { name: tag, description };
    }),
    paths,
    webhooks,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "an API key, `sk_test_...` or `sk_live_...`" },
      },
      schemas,
    },
  };
}
