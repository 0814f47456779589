/**
 * The shapes of the REST declarations (docs/rest.md "How the REST adapter is declared"): types
 * only, so the declarations (resources.ts), the special handlers (special.ts), the dispatcher
 * (router.ts) and the OpenAPI writer (openapi.ts) share them without importing one another.
 */
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import type { ZodType } from "zod";
import type { FilterSpec } from "./filters.js";

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

/**
 * The seven standard shapes of a route; each implies its method, path suffix, GraphQL variables
 * and answer (resources.ts `SHAPES`, run by router.ts): create `POST /` (201), retrieve `GET /{id}`, update
 * `PATCH /{id}`, list `GET /` (`{count, next, previous, results}`), delete `DELETE /{id}` (204),
 * pdf `GET /{id}/pdf` (`{file}`), finalize `GET /{id}/finalize`.
 */
export type Shape = "create" | "retrieve" | "update" | "list" | "delete" | "pdf" | "finalize";

/** A typed GraphQL operation of src/rest/operations (its result and variables are checked where it is written). */
export type Operation = TypedDocumentNode<unknown, never>;

/** One REST request as a handler sees it. */
export interface RestRequest {
  request: Request;
  url: URL;
  /** the path's parameters (`id`, `key`, `name`), decoded */
  params: Record<string, string>;
  /** the parsed JSON body of a POST or PATCH (`{}` when empty) */
  body: unknown;
  /** absolute base of the service, e.g. http://host:3000 */
  base: string;
  /** runs a GraphQL operation on the same schema with the request's key; GraphQL errors become the REST error */
  run: <R, V>(doc: TypedDocumentNode<R, V>, variables: V) => Promise<R>;
}

/** How a resource is printed: by which shape of route, with which `?expand=` names. */
export interface PrintContext {
  shape: Shape | "special";
  expand: Set<string>;
}

/** A route outside the seven shapes, answered by a handler of special.ts. */
export interface SpecialRoute {
  method: Method;
  /** the suffix after the resource's path, e.g. `/:id/pay` (empty for the resource's own path) */
  path: string;
  /** one line for the reference (OpenAPI `summary`) */
  summary: string;
  handle: (r: RestRequest) => Promise<Response>;
  /** the JSON body the route takes (OpenAPI request body), if any */
  body?: ZodType;
  /** the success status and what it answers: the resource, a bare array of it, or a named schema */
  answers?: { status: number; schema: "resource" | "array" | "none" | "pdf" | Record<string, unknown> };
  /** query parameters beyond filters and paging, for the reference: name -> description */
  query?: Record<string, string>;
}

/** One REST resource: everything its routes, the reference and the contract test know of it. */
export interface ResourceDecl {
  /** the resource's name in messages and the reference (`credit note`) */
  name: string;
  /** the reference's group (OpenAPI tag) */
  tag: string;
  /** the collection path, e.g. `/v1/invoices` */
  path: string;
  /** the GraphQL type a retrieve's `node(id)` must be; another type reads as 404 */
  typename: string;
  /** the standard routes, each with its operation */
  ops: Partial<Record<Shape, Operation>>;
  /** the body (spec snake_case, checked) and its mapping to the GraphQL input */
  body?: { schema: ZodType; input: (body: never) => unknown };
  /**
   * the GraphQL node (the operation's fragment) as the spec's JSON; by default printer.ts's `printNode` of
   * `typename`
   */
  print?: (node: never, how: PrintContext) => unknown;
  /** the list's filters (REST parameter -> GraphQL filter) */
  filters?: FilterSpec;
  /** the list's filters go in `where` (default) or as separate variables (reference lists) */
  filtersAs?: "where" | "variables";
  /** `?expand=` names the routes take (credit notes: `invoice`, as the `expandInvoice` variable) */
  expand?: readonly string[];
  /** query parameters rewritten before the filters read them (swap statuses in any case) */
  query?: (query: URLSearchParams) => URLSearchParams;
  /** routes outside the standard shapes */
  special?: SpecialRoute[];
  /** one paragraph for the reference */
  description: string;
}
