/**
 * The REST dispatcher (docs/rest.md "How the REST adapter is declared"; docs/rest-api.md
 * "Endpoints"): the routes are read from the declarations in resources.ts; each standard shape
 * (create, retrieve, update, list, delete, pdf, finalize) is run here the same way for every
 * resource, a special route by its handler in special.ts. Every route executes a typed GraphQL
 * document through the same Yoga instance as /graphql, so auth, rules and errors are the GraphQL
 * ones; REST only reshapes.
 */
import { print, type ExecutionResult } from "graphql";
import { Request as FetchRequest } from "@whatwg-node/fetch";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { addFieldError, DomainError, type FieldErrors } from "../domain/errors.js";
import { checkJsonValue, DEFAULT_TEXT_LIMIT, jsonDepthProblem, textProblem } from "../domain/input-limits.js";
import { domainErrorOfDatabaseFailure } from "../infra/database-errors.js";
import { parseBody } from "./bodies.js";
import { parseFilters } from "./filters.js";
import { jsonResponse } from "./json.js";
import { openApiDocument } from "./openapi.js";
import { printNode } from "./printer.js";
import { RESOURCES, SHAPES } from "./resources.js";
import { errorResponse, expansions, expectNode, pageArgs, paged, RestError, STATUS_BY_CODE } from "./respond.js";
import type { Method, PrintContext, ResourceDecl, RestRequest, Shape } from "./types.js";

export { errorResponse } from "./respond.js";

type Data = Record<string, unknown>;
type Connection = { totalCount: number; edges: { node: unknown }[] };

/** The one result of an operation: `node` (checked to be the resource) or its single root field. */
function result(data: Data, decl: ResourceDecl, id: string | undefined): unknown {
  if ("node" in data) return expectNode(data.node, decl.typename, decl.name, id ?? "");
  return Object.values(data)[0];
}

/** Runs a standard shape of `decl` (the variables and answer every resource shares). */
/** The resource as the spec's JSON: its own printer, else the generic one (printer.ts) of its type. */
const printed = (decl: ResourceDecl, node: unknown, how: PrintContext) =>
  decl.print ? decl.print(node as never, how) : printNode(decl.typename, node, how);

async function runShape(decl: ResourceDecl, shape: Shape, r: RestRequest): Promise<Response> {
  const expand = decl.expand ? expansions(r.url, decl.expand) : new Set<string>();
  const how: PrintContext = { shape, expand };
  const variables: Data = decl.expand ? { expandInvoice: expand.has("invoice") } : {};
  if (r.params.id !== undefined) variables.id = r.params.id;
  if ((shape === "create" || shape === "update") && decl.body)
    variables.input = decl.body.input(parseBody(decl.body.schema, r.body) as never);
  let page: ReturnType<typeof pageArgs> | undefined;
  if (shape === "list") {
    page = pageArgs(r.url);
    const query = decl.query ? decl.query(r.url.searchParams) : r.url.searchParams;
    const filters = parseFilters(query, decl.filters ?? {});
    Object.assign(variables, { first: page.first, offset: page.offset });
    if (decl.filtersAs === "variables") Object.assign(variables, filters);
    else variables.where = filters;
  }
  const data = (await r.run(decl.ops[shape]!, variables as never)) as Data;
  if (shape === "delete") return new Response(null, { status: 204 });
  const value = result(data, decl, r.params.id);
  if (shape === "pdf") return jsonResponse({ file: (value as { pdf: string }).pdf });
  if (page) {
    const { totalCount, edges } = value as Connection;
    return paged(
      r,
      page,
      totalCount,
      edges.map((e) => printed(decl, e.node, how)),
    );
  }
  return jsonResponse(printed(decl, value, how), shape === "create" ? 201 : 200);
}

interface CompiledRoute {
  method: Method;
  path: string;
  regex: RegExp;
  names: string[];
  handle: (r: RestRequest) => Promise<Response>;
}

/** Every route of the declarations: the standard shapes, then the special routes. */
const routes: { method: Method; path: string; handle: (r: RestRequest) => Promise<Response> }[] = RESOURCES.flatMap(
  (decl) => [
    ...(Object.keys(decl.ops) as Shape[]).map((shape) => ({
      method: SHAPES[shape].method,
      path: decl.path + SHAPES[shape].suffix,
      handle: (r: RestRequest) => runShape(decl, shape, r),
    })),
    ...(decl.special ?? []).map((s) => ({ method: s.method, path: decl.path + s.path, handle: s.handle })),
  ],
);

/** Method and path of every REST route, in declaration order (the fuzz test takes its list from here). */
export function restRoutes(): { method: Method; path: string }[] {
  return routes.map(({ method, path }) => ({ method, path }));
}

const compiled: CompiledRoute[] = routes.map((route) => {
  const names: string[] = [];
  const pattern = route.path.replace(/:([a-z]+)/g, (_m, name: string) => {
    names.push(name);
    return "([^/]+)";
  });
  return { ...route, regex: new RegExp(`^${pattern}/?$`), names };
});

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
function definedOnly(variables: unknown): Record<string, unknown> {
  const given: Record<string, unknown> = {};
  for (const [name, value] of Object.entries((variables ?? {}) as Record<string, unknown>))
    if (value !== undefined) given[name] = value;
  return given;
}

type GraphQLResponse = {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string; fields?: FieldErrors } }[];
};

/** Maps GraphQL errors to the REST error response: the first error's code decides the status. */
function graphQLErrorResponse(errors: NonNullable<GraphQLResponse["errors"]>): Response {
  const code = errors[0].extensions?.code ?? "internal_error";
  if (!Object.hasOwn(STATUS_BY_CODE, code)) return errorResponse("internal_error", "Unexpected error.");
  const fields: FieldErrors = {};
  for (const e of errors) {
    if ((e.extensions?.code ?? code) !== code) continue;
    for (const [k, v] of Object.entries(e.extensions?.fields ?? {}))
      for (const reason of v) addFieldError(fields, k, reason);
  }
  const message = errors
    .filter((e) => (e.extensions?.code ?? code) === code)
    .map((e) => e.message)
    .join("; ");
  return errorResponse(code, message, fields);
}

let openApiJson: string | undefined;

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
      return new Response((openApiJson ??= JSON.stringify(openApiDocument())), {
        headers: { "content-type": "application/json; charset=utf-8" },
      });
    const matches = compiled.filter((route) => route.regex.test(url.pathname));
    if (matches.length === 0) return errorResponse("not_found", `No route for ${url.pathname}`);
    const route = matches.find((m) => m.method === request.method);
    if (!route) {
      return errorResponse(
        "method_not_allowed",
        `${request.method} is not allowed on ${url.pathname}; use ${matches.map((m) => m.method).join(", ")}`,
      );
    }
    const values = route.regex.exec(url.pathname)!.slice(1);
    let params: Record<string, string>;
    try {
      params = Object.fromEntries(route.names.map((name, i) => [name, decodeURIComponent(values[i])]));
    } catch {
      return errorResponse("not_found", `No resource at ${url.pathname}`);
    }
    // a path segment with NUL, an unpaired surrogate or over 200 characters names nothing (ids: input-guard.ts)
    if (Object.values(params).some((value) => textProblem(value, 200) !== null))
      return errorResponse("not_found", `No resource at ${url.pathname}`);
    // query strings and bodies: the text and structure rules of domain/input-limits.ts, before anything else
    const inputErrors: FieldErrors = {};
    for (const [name, value] of url.searchParams) {
      const problem = textProblem(name, 200) ?? textProblem(value, DEFAULT_TEXT_LIMIT);
      if (problem) addFieldError(inputErrors, name, problem);
    }
    if (Object.keys(inputErrors).length) return errorResponse("validation_error", "Invalid query string", inputErrors);

    let body: unknown;
    if (route.method === "POST" || route.method === "PATCH") {
      const text = await request.text();
      const depth = jsonDepthProblem(text);
      if (depth) return errorResponse("validation_error", `Invalid request body: ${depth}`, { body: [depth] });
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        return errorResponse("validation_error", "The body must be valid JSON", { body: ["must be valid JSON"] });
      }
      checkJsonValue(body, "", inputErrors, () => null); // lengths: per field, by the GraphQL input check
      if (Object.keys(inputErrors).length) {
        const summary = Object.entries(inputErrors)
          .map(([k, v]) => `${k}: ${v.join(", ")}`)
          .join("; ");
        return errorResponse("validation_error", `Invalid request body: ${summary}`, inputErrors);
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
