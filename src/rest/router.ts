/**
 * The REST dispatcher (docs/rest.md "How the REST adapter is declared"; docs/rest-api.md
 * "Endpoints"): the routes are read from the declarations in resources.ts; each standard shape
 * (create, retrieve, update, list, delete, pdf, finalize) and each special route with an operation
 * is run here the same way for every resource (`runRoute`), another special route by its handler
 * in special.ts. Every route executes a typed GraphQL document through the same Yoga instance as
 * /graphql, so auth, rules and errors are the GraphQL ones; REST only reshapes.
 */
import { getNamedType, isObjectType, print, type ExecutionResult } from "graphql";
import { Request as FetchRequest } from "@whatwg-node/fetch";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { addFieldError, DomainError, type FieldErrors } from "../domain/errors.js";
import { checkJsonValue, DEFAULT_TEXT_LIMIT, jsonDepthProblem, textProblem } from "../domain/input-limits.js";
import { domainErrorOfDatabaseFailure } from "../infra/database-errors.js";
import { listFilters, parseFilters } from "./filters.js";
import { bodyVariables } from "./input.js";
import { jsonResponse, restResponse } from "./json.js";
import { openApiDocument } from "./openapi.js";
import { REVALIDATE, serveFile, staticFile, type StaticFile } from "../infra/static-files.js";

const OPENAPI_TYPE = "application/json; charset=utf-8";
import { operationNamed, printNode, REST_PATH_NAMES, rootOf } from "./printer.js";
import { RESOURCES, routesOf } from "./resources.js";
import {
  arrayPage,
  errorResponse,
  expansions,
  expectNode,
  pageArgs,
  paged,
  RestError,
  STATUS_BY_CODE,
} from "./respond.js";
import * as special from "./special.js";
import type { Method, ResourceDecl, RestRequest, Route } from "./types.js";

export { errorResponse } from "./respond.js";

type Data = Record<string, unknown>;
type Connection = { totalCount: number; edges: { node: unknown }[] };

/**
 * Runs `route` of `decl` by rule: the path's parameters, the body (on a POST or PATCH), the page and
 * filters (a list) and `?expand=` as the operation's variables; its root field's value (a `node`
 * checked to be the resource; none is a 404) printed as the shape answers it, or a file's bytes.
 */
async function runRoute(decl: ResourceDecl, route: Route, r: RestRequest): Promise<Response> {
  const { shape } = route;
  const doc = operationNamed(route.operation!);
  const expand = decl.expand ? expansions(r.url, decl.expand) : new Set<string>();
  const variables: Data = { ...r.params, ...(decl.expand ? { expandInvoice: expand.has("invoice") } : {}) };
  if (route.method === "POST" || route.method === "PATCH") Object.assign(variables, bodyVariables(doc, r.body));
  let page: ReturnType<typeof pageArgs> | undefined;
  if (shape === "list") {
    page = pageArgs(r.url);
    const given = decl.query ? decl.query(r.url.searchParams) : r.url.searchParams;
    // `?expand=` is no filter (expansions read it above)
    const query = decl.expand ? new URLSearchParams([...given].filter(([p]) => p !== "expand")) : given;
    const { spec, where } = listFilters(doc, decl.typename);
    const filters = parseFilters(query, spec);
    Object.assign(variables, { first: page.first, offset: page.offset }, where ? { where: filters } : filters);
  }
  const data = (await r.run(doc, variables as never)) as Data;
  if (shape === "delete") return restResponse(null, { status: 204 });
  const value = "node" in data ? expectNode(data.node, decl.typename, decl.name, r.params.id) : Object.values(data)[0];
  const named = Object.keys(r.params).map((name) => ` with this ${name}`);
  const missing = `No ${decl.name}${named.join("")} (unknown, no longer valid, or of another organization or mode)`;
  if (value === null) throw new RestError(errorResponse("not_found", missing));
  if (shape === "pdf") return jsonResponse({ file: (value as { pdf: string }).pdf });
  if (route.answers === "file") {
    const file = value as { name: string; contentType: string; content: string };
    return restResponse(Buffer.from(file.content, "base64"), {
      headers: { "content-type": file.contentType, "content-disposition": `inline; filename="${file.name}"` },
    });
  }
  const type = getNamedType(rootOf(doc).field.type);
  const typename = shape || !isObjectType(type) ? decl.typename : type.name;
  const print = (node: unknown) => printNode(typename, node, { shape: shape ?? "special", expand });
  if (!page) return jsonResponse(Array.isArray(value) ? value.map(print) : print(value), Number(route.status ?? 200));
  const { totalCount, edges } = value as Connection;
  return (route.answers === "array" ? arrayPage : paged)(
    r,
    page,
    totalCount,
    edges.map((e) => print(e.node)),
  );
}

/**
 * Every route of the declarations (resources.ts `routesOf`): the standard shapes, then the special
 * routes, each with its path as a pattern and the names of its parameters.
 */
const routes = RESOURCES.flatMap((decl) =>
  routesOf(decl).map((route) => {
    const path = decl.path + route.path;
    return {
      method: route.method,
      path,
      pattern: new RegExp(`^${path.replace(/:[a-z]+/g, "([^/]+)")}/?$`),
      names: [...path.matchAll(/:([a-z]+)/g)].map((m) => m[1]),
      handle: route.handle ? special[route.handle] : (r: RestRequest) => runRoute(decl, route, r),
    };
  }),
);

/** The first two segments of a path (`/v1/usages` of `/v1/usages/usg_1/`): every route's are literal. */
const prefixOf = (path: string) => path.split("/", 3).join("/");

/**
 * The routes by the first two segments of their path, so a request's path is tested against its
 * resource's few patterns rather than all of them.
 */
const routesByPrefix = new Map<string, typeof routes>();
for (const route of routes) {
  const prefix = prefixOf(route.path);
  if (prefix.includes(":")) throw new Error(`${route.path}: a parameter in the first two segments`);
  routesByPrefix.set(prefix, [...(routesByPrefix.get(prefix) ?? []), route]);
}

/** Method and path of every REST route, in declaration order (the fuzz test takes its list from here). */
export function restRoutes(): { method: Method; path: string }[] {
  return routes.map(({ method, path }) => ({ method, path }));
}

/** What the REST adapter needs of the Yoga instance: running an operation's parameters to its result in process. */
interface YogaLike {
  getResultForParams(
    payload: { params: { query: string; variables?: Record<string, unknown> }; request: Request },
    serverContext: Record<string, never>,
  ):
    | PromiseLike<ExecutionResult | AsyncIterable<ExecutionResult> | undefined>
    | ExecutionResult
    | AsyncIterable<ExecutionResult>
    | undefined;
}

/**
 * The variables without those set to `undefined`, which JSON (the wire of /graphql) leaves out: an operation's
 * variable left out takes its default, where one given as `undefined` would read as null.
 */
const definedOnly = (variables: unknown): Record<string, unknown> =>
  Object.fromEntries(Object.entries(variables ?? {}).filter(([, value]) => value !== undefined));

type GraphQLResponse = {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string; fields?: FieldErrors } }[];
};

/** A GraphQL input path (`recipients.1`) as the REST body names it (`recipient.1`: printer.ts `restName`). */
const restPath = (path: string) =>
  path.replace(/[^.]+/g, (part) => (Object.hasOwn(REST_PATH_NAMES, part) ? REST_PATH_NAMES[part] : part));

/**
 * Maps GraphQL errors to the REST error response: the first error's code decides the status; input
 * paths as REST names them; a variable's coercion errors (graphql/errors.ts) summed up as the body's.
 */
function graphQLErrorResponse(errors: NonNullable<GraphQLResponse["errors"]>): Response {
  const code = errors[0].extensions?.code ?? "internal_error";
  if (!Object.hasOwn(STATUS_BY_CODE, code)) return errorResponse("internal_error", "Unexpected error.");
  const fields: FieldErrors = {};
  const body: string[] = [];
  const messages: string[] = [];
  for (const e of errors) {
    if ((e.extensions?.code ?? code) !== code) continue;
    const coerced = e.message.startsWith('Variable "$');
    for (const [k, v] of Object.entries(e.extensions?.fields ?? {})) {
      for (const reason of v) addFieldError(fields, restPath(k), reason);
      if (coerced) body.push(`${restPath(k)}: ${v.join(", ")}`);
    }
    if (!coerced || !e.extensions?.fields) messages.push(e.message);
  }
  if (body.length) messages.unshift(`Invalid request body: ${body.join("; ")}`);
  return errorResponse(code, messages.join("; "), fields);
}

/** The reason of a query parameter given more than once (`?name=a&name=b`). */
const REPEATED_PARAMETER = "given more than once; a parameter takes one value (a filter's several: name__in=a,b)";

/** The OpenAPI document as served: made once, compressed once, revalidated by its ETag (infra/static-files.ts). */
let openApiFile: StaticFile | undefined;

/** A route of the declarations as the dispatcher matches it (`routes`). */
type CompiledRoute = (typeof routes)[number];

/**
 * The route of `method` on `pathname`, with its parameters' values as the path gives them (still escaped); else
 * the answer: 404 `not_found` when no route has that path, 405 `method_not_allowed` naming the methods it has.
 */
function matchRoute(method: string, pathname: string): { route: CompiledRoute; values: string[] } | Response {
  const matches = (routesByPrefix.get(prefixOf(pathname)) ?? []).flatMap((route) => {
    const found = route.pattern.exec(pathname);
    return found ? [{ route, values: found.slice(1) }] : [];
  });
  if (matches.length === 0) return errorResponse("not_found", `No route for ${pathname}`);
  const match = matches.find((m) => m.route.method === method);
  if (!match) {
    return errorResponse(
      "method_not_allowed",
      `${method} is not allowed on ${pathname}; use ${matches.map((m) => m.route.method).join(", ")}`,
    );
  }
  return match;
}

/**
 * The path's parameters by name, unescaped; undefined when one names nothing: a malformed escape, NUL, an unpaired
 * surrogate or over 200 characters (ids: input-guard.ts).
 */
function pathParams(names: string[], values: string[]): Record<string, string> | undefined {
  let params: Record<string, string> | undefined;
  try {
    params = Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(values[i])]));
  } catch {} // a malformed escape names nothing
  // nor does a path segment with NUL, an unpaired surrogate or over 200 characters (ids: input-guard.ts)
  if (!params || Object.values(params).some((value) => textProblem(value, 200) !== null)) return undefined;
  return params;
}

/**
 * The problems of a query string by parameter (empty when none): the text rules of domain/input-limits.ts (names
 * of 200 characters at most, values of DEFAULT_TEXT_LIMIT) and a parameter given more than once (`expand` excepted:
 * its names add up), never the first or last of several.
 */
function queryProblems(searchParams: URLSearchParams): FieldErrors {
  const inputErrors: FieldErrors = {};
  const seen = new Set<string>();
  for (const [name, value] of searchParams) {
    const problem =
      textProblem(name, 200) ??
      textProblem(value, DEFAULT_TEXT_LIMIT) ??
      (seen.has(name) && name !== "expand" ? REPEATED_PARAMETER : null);
    const known = Object.hasOwn(inputErrors, name) && inputErrors[name].includes(problem ?? "");
    if (problem && !known) addFieldError(inputErrors, name, problem);
    seen.add(name);
  }
  return inputErrors;
}

/**
 * The JSON body of a POST or PATCH (`{}` when empty), checked for depth and the structure rules of
 * domain/input-limits.ts (their problems added to `inputErrors`; lengths are checked per field by the GraphQL input
 * check). Throws RestError with the 400 `validation_error` answer for a body too deep, not JSON or breaking a rule.
 */
async function requestBody(request: Request, inputErrors: FieldErrors): Promise<unknown> {
  const text = await request.text();
  const depth = jsonDepthProblem(text);
  if (depth)
    throw new RestError(errorResponse("validation_error", `Invalid request body: ${depth}`, { body: [depth] }));
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    throw new RestError(
      errorResponse("validation_error", "The body must be valid JSON", { body: ["must be valid JSON"] }),
    );
  }
  checkJsonValue(body, "", inputErrors, () => null); // lengths: per field, by the GraphQL input check
  if (Object.keys(inputErrors).length) {
    const summary = Object.entries(inputErrors)
      .map(([k, v]) => `${k}: ${v.join(", ")}`)
      .join("; ");
    throw new RestError(errorResponse("validation_error", `Invalid request body: ${summary}`, inputErrors));
  }
  return body;
}

/**
 * The REST adapter over `yoga`: `handle(request, requestId)` answers a request under /v1 (the OpenAPI document, or a
 * route run as its GraphQL operation in process), with the spec's error answers. `publicUrl`: the base of links in
 * answers (default: the request's origin).
 */
export function createRestHandler({ yoga, publicUrl }: { yoga: YogaLike; publicUrl?: string }) {
  const printed = new Map<unknown, string>();
  const source = (doc: TypedDocumentNode<unknown, unknown>) => {
    let text = printed.get(doc);
    if (!text) printed.set(doc, (text = print(doc)));
    return text;
  };

  return async function handle(request: Request, requestId: string): Promise<Response> {
    const url = new URL(request.url);
    // the OpenAPI document of these routes: public, no API key (docs/rest.md "OpenAPI")
    if (url.pathname === "/v1/openapi.json" && request.method === "GET")
      return serveFile(request, (openApiFile ??= staticFile(JSON.stringify(openApiDocument()), OPENAPI_TYPE)), {
        cacheControl: REVALIDATE,
      });
    const matched = matchRoute(request.method, url.pathname);
    if (!("route" in matched)) return matched;
    const { route, values } = matched;
    const params = pathParams(route.names, values);
    if (!params) return errorResponse("not_found", `No resource at ${url.pathname}`);
    // query strings and bodies: the text and structure rules of domain/input-limits.ts, before anything else
    const inputErrors = queryProblems(url.searchParams);
    if (Object.keys(inputErrors).length) return errorResponse("validation_error", "Invalid query string", inputErrors);
    let body: unknown;
    if (route.method === "POST" || route.method === "PATCH") {
      try {
        body = await requestBody(request, inputErrors);
      } catch (e) {
        if (e instanceof RestError) return e.response;
        throw e;
      }
    }

    const run = async <R, V>(doc: TypedDocumentNode<R, V>, variables: V): Promise<R> => {
      const headers: Record<string, string> = { "content-type": "application/json", "x-request-id": requestId };
      const authorization = request.headers.get("authorization");
      if (authorization) headers.authorization = authorization;
      // in process, on Yoga's own path from an operation's parameters to its result (what /graphql runs after
      // reading the HTTP body): its onParams and onExecutionResult hooks and every envelop plugin (document limits,
      // error masking, the context with the API key's auth and the request's transaction, the time budget) and the
      // schema's input check, with the GraphQL request made of the REST request's key and id only (no cookie: the
      // portal's credential is not a REST one). No HTTP request, no JSON: the variables go in and the result
      // comes back as values
      const result = await yoga.getResultForParams(
        {
          params: { query: source(doc as TypedDocumentNode<unknown, unknown>), variables: definedOnly(variables) },
          // whatwg-node's Request (Yoga's fetch API): no abort signal or body stream made for it
          request: new FetchRequest(`${url.origin}/graphql`, { method: "POST", headers }),
        },
        {},
      );
      if (!result || Symbol.asyncIterator in result) throw new Error("a REST operation answered with a stream");
      if (result.errors?.length)
        throw new RestError(graphQLErrorResponse(result.errors as unknown as NonNullable<GraphQLResponse["errors"]>));
      return result.data as R;
    };

    try {
      return await route.handle({ request, url, params, body, base: publicUrl ?? url.origin, run });
    } catch (e) {
      if (e instanceof RestError) return e.response;
      const error = e instanceof DomainError ? e : domainErrorOfDatabaseFailure(e);
      if (error) return errorResponse(error.code, error.message, error.fields);
      throw e;
    }
  };
}
