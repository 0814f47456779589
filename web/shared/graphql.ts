/**
 * The GraphQL client set-up of both frontends (urql): same-origin /graphql with the HttpOnly session cookie and a
 * CSRF header carrying the readable CSRF cookie's value, which the service requires of every cookie-authenticated
 * request (the portal: portal_csrf / X-Portal-CSRF; the dashboard: dashboard_csrf / X-Dashboard-CSRF).
 */
import { Client, cacheExchange, fetchExchange, type CombinedError } from "@urql/core";

/** The value of the cookie `name`, "" when absent. */
export function readCookie(name: string): string {
  const cookie = document.cookie.split("; ").find((c) => c.startsWith(`${name}=`));
  return cookie ? cookie.slice(name.length + 1) : "";
}

export interface CookieClient {
  client: Client;
  /** the headers of a request: the CSRF header, the `extra` headers of the client, plus `more` */
  headers(more?: Record<string, string>): Record<string, string>;
}

/**
 * A client whose every request carries `csrfHeader` with the `csrfCookie` cookie's value, and `extra()`'s headers
 * (read at each request: the dashboard's test/live mode).
 */
export function cookieClient(
  csrfCookie: string,
  csrfHeader: string,
  extra: () => Record<string, string> = () => ({}),
): CookieClient {
  const headers = (more: Record<string, string> = {}) => ({
    [csrfHeader]: readCookie(csrfCookie),
    ...extra(),
    ...more,
  });
  const client = new Client({
    url: "/graphql",
    exchanges: [cacheExchange, fetchExchange],
    preferGetMethod: false,
    requestPolicy: "network-only",
    fetchOptions: () => ({ credentials: "same-origin", headers: headers() }),
  });
  return { client, headers };
}

/** True when the credential is gone (expired, revoked, or never set). */
export function isExpired(error: CombinedError | undefined): boolean {
  if (!error) return false;
  const status = (error.response as Response | undefined)?.status;
  return (
    status === 401 ||
    status === 403 ||
    error.graphQLErrors.some((e) => e.extensions?.code === "authentication_required")
  );
}

/** The message of a failed operation, for the person reading the page. */
export function errorMessage(error: CombinedError): string {
  return error.graphQLErrors.map((e) => e.message).join(" ") || error.message;
}
