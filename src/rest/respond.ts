/**
 * The REST answers every route shares (docs/rest.md "Responses", "Lists"): the error body, 404 of
 * a wrong node, page parameters, the `{count, next, previous, results}` envelope and the bare
 * array with paging headers.
 */
import { addFieldError, ValidationError, type FieldErrors } from "../domain/errors.js";
import { boundFieldErrors, boundMessage } from "../domain/input-limits.js";
import { RETRY_AFTER_SECONDS } from "../infra/database-errors.js";
import { DEFAULT_PAGE_SIZE, MAX_OFFSET, MAX_PAGE_SIZE } from "../graphql/pagination.js";
import { commaList } from "./filters.js";
import { jsonResponse } from "./json.js";
import type { RestRequest } from "./types.js";

/** HTTP status of each error code (docs/rest.md "Responses"); anything else is a 500 `internal_error`. */
export const STATUS_BY_CODE: Record<string, number> = {
  validation_error: 400,
  authentication_required: 401,
  permission_denied: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_state: 409,
  tax_agency_rejected: 422,
  rate_limited: 429,
  service_unavailable: 503,
  // GraphQL limits (graphql/limits.ts): a document over a limit, a query over its time budget
  query_too_complex: 400,
  request_timeout: 503,
};

/**
 * The REST error body (docs/rest.md "Responses"), the one place REST errors are written: the
 * message and field reasons are bounded (domain/input-limits.ts `boundMessage`), and a 503
 * `service_unavailable` carries `Retry-After` (infra/database-errors.ts).
 */
export function errorResponse(code: string, message: string, fields?: FieldErrors): Response {
  const status = Object.hasOwn(STATUS_BY_CODE, code) ? STATUS_BY_CODE[code] : 500;
  const bounded = fields && Object.keys(fields).length ? boundFieldErrors(fields) : null;
  const response = jsonResponse(
    { error: { code, message: boundMessage(message), ...(bounded ? { fields: bounded } : {}) } },
    status,
  );
  if (status === 503) response.headers.set("retry-after", String(RETRY_AFTER_SECONDS));
  return response;
}

/** A REST answer thrown from inside a handler (a GraphQL error, a 404 of a wrong node). */
export class RestError extends Error {
  constructor(readonly response: Response) {
    super("rest error");
  }
}

/** node(id) must be of `typename`; another type or null reads as 404. */
export function expectNode<T>(node: T | null | undefined, typename: string, resource: string, id: string): T {
  if (!node || (node as { __typename?: string }).__typename !== typename)
    throw new RestError(errorResponse("not_found", `No ${resource} with id ${id}`));
  return node;
}

/** `page`/`page_size` of a list request as the connection's `first`/`offset` (page-number access). */
export function pageArgs(url: URL): { page: number; size: number; first: number; offset: number } {
  const errors: FieldErrors = {};
  const int = (name: string, fallback: number, max?: number) => {
    const raw = url.searchParams.get(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < 1 || (max !== undefined && value > max)) {
      addFieldError(errors, name, max ? `must be an integer from 1 to ${max}` : "must be a positive integer");
    }
    return value;
  };
  const page = int("page", 1);
  const size = int("page_size", DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  if (!errors.page && !errors.page_size && (page - 1) * size > MAX_OFFSET)
    addFieldError(errors, "page", `must be at most ${Math.floor(MAX_OFFSET / size) + 1} with page_size ${size}`);
  if (Object.keys(errors).length) throw new ValidationError("Invalid pagination", errors);
  return { page, size, first: size, offset: (page - 1) * size };
}

type Page = { page: number; size: number };

function pageUrl(r: RestRequest, page: number): string {
  const next = new URL(r.url.pathname + r.url.search, r.base);
  next.searchParams.set("page", String(page));
  return next.toString();
}

/** The next and previous page's URLs (the previous of a page past the end is the last page). */
function neighbours(r: RestRequest, page: Page, count: number) {
  return {
    next: page.page * page.size < count ? pageUrl(r, page.page + 1) : null,
    previous: page.page > 1 ? pageUrl(r, Math.min(page.page - 1, Math.max(1, Math.ceil(count / page.size)))) : null,
  };
}

/** `{count, next, previous, results}` (docs/rest.md "Lists"). */
export function paged(r: RestRequest, page: Page, count: number, results: unknown[]): Response {
  return jsonResponse({ count, ...neighbours(r, page, count), results });
}

/**
 * A list the spec returns as a bare array (the reminder list): the page's items as the body, and
 * the page links in headers: `X-Total-Count`, and `Link` with rel="next"/"prev" (docs/decisions.md).
 */
export function arrayPage(r: RestRequest, page: Page, count: number, results: unknown[]): Response {
  const response = jsonResponse(results);
  response.headers.set("x-total-count", String(count));
  const { next, previous } = neighbours(r, page, count);
  const links = [next && `<${next}>; rel="next"`, previous && `<${previous}>; rel="prev"`].filter(Boolean);
  if (links.length) response.headers.set("link", links.join(", "));
  return response;
}

/**
 * `?expand=a,b` (or repeated `expand=`): which references to print as objects. Only `allowed`
 * names are accepted; anything else is a 400 naming the parameter.
 */
export function expansions(url: URL, allowed: readonly string[]): Set<string> {
  const wanted = url.searchParams.getAll("expand").flatMap(commaList);
  const unknown = wanted.filter((v) => !allowed.includes(v));
  if (unknown.length)
    throw ValidationError.field("expand", `cannot expand ${unknown.join(", ")}; expandable: ${allowed.join(", ")}`);
  return new Set(wanted);
}
