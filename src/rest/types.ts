/**
 * The shapes of the REST declarations (docs/rest.md "How the REST adapter is declared"): types
 * only, so the declarations (resources.ts), the special handlers (special.ts), the dispatcher
 * (router.ts) and the OpenAPI writer (openapi.ts) share them without importing one another.
 */
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import type * as ops from "../graphql/generated/operations.js";

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

/** The name of an operation (`RestCreateCreditNote`): a standard one (standard.ts) or one of src/rest/operations. */
export type OperationName = { [K in keyof typeof ops]: K extends `${infer N}Document` ? N : never }[keyof typeof ops];

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

/**
 * One route of a resource: a standard shape (resources.ts `routesOf`) or a special route. A route
 * runs its `operation` by rule (router.ts `runRoute`: the path's parameters, on a POST or PATCH the
 * body (input.ts), on a list the page and filters as variables; the root field's value printed by
 * printer.ts) or is answered by its `handle` (special.ts).
 */
export interface Route {
  method: Method;
  /** the suffix after the resource's path, e.g. `/:id/pay` (empty for the resource's own path) */
  path: string;
  /** one line for the reference (OpenAPI `summary`) */
  summary: string;
  /** the standard shape it is, if it is one */
  shape?: Shape;
  /**
   * its operation: a special route's is derived by rule (standard.ts: the root field its name names
   * after `Rest`, all its arguments, the resource's fragment) unless src/rest/operations writes it
   */
  operation?: OperationName;
  /** the name of its handler in special.ts */
  handle?: "payPayment" | "recordUsage" | "cancelSubscription";
  /** the success status (default 200; a handler's for the reference only, both when it answers two) */
  status?: number | number[];
  /**
   * what a handler answers, for the reference: the resource (default), a bare array of it, a file's
   * bytes, or the resource with these properties (a route with an operation: read from it)
   */
  answers?: "resource" | "array" | "file" | Record<string, unknown>;
  /**
   * another answer the handler gives in some cases, for the reference: the value of this operation's root field (a
   * batch's answer beside the single resource); the reference declares either
   */
  alsoAnswers?: OperationName;
  /** query parameters beyond filters and paging, for the reference: name -> description */
  query?: Record<string, string>;
}

/** One REST resource: everything its routes, the reference and the contract test know of it. */
export interface ResourceDecl {
  /** the resource's name in messages and the reference (`credit note`) */
  name: string;
  /** the reference's group (OpenAPI tag); by default the name in the plural (`Credit notes`) */
  tag: string;
  /** the collection path, e.g. `/v1/invoices` */
  path: string;
  /**
   * the GraphQL type of the resource: what a retrieve's `node(id)` must be (another type reads as
   * 404) and how it prints; by default the name in PascalCase (`CreditNote`)
   */
  typename: string;
  /**
   * the standard routes it has, each running the operation named by convention (resources.ts
   * `operationName`: `RestCreateCreditNote`, `RestCreditNotes`, ...), derived by rule (standard.ts);
   * the body, the filters and the answer's schema are read from those operations
   */
  shapes: Shape[];
  /** the root fields of its standard operations where they are not the rule's (`createX`, `node`, `xs`) */
  roots?: Partial<Record<Shape, string>>;
  /** the list answers a bare array, its total and neighbours in headers (the spec's reminders) */
  bareList?: true;
  /** `?expand=` names the routes take (credit notes: `invoice`, as the `expandInvoice` variable) */
  expand?: readonly string[];
  /** query parameters rewritten before the filters read them (swap statuses in any case) */
  query?: (query: URLSearchParams) => URLSearchParams;
  /** routes outside the standard shapes */
  special?: Route[];
  /** one paragraph for the reference */
  description: string;
}
