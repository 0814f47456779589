/**
 * The portal's GraphQL client (urql): same-origin /graphql with the HttpOnly credential cookie
 * and the X-Portal-CSRF header (the readable portal_csrf cookie's value), which the service
 * requires of every cookie-authenticated request.
 */
import { Client, cacheExchange, fetchExchange, type CombinedError } from "@urql/core";

/** The CSRF token the service set with the credential. */
export function csrfToken(): string {
  const cookie = document.cookie.split("; ").find((c) => c.startsWith("portal_csrf="));
  return cookie ? cookie.slice("portal_csrf=".length) : "";
}

/** Headers of a request: the CSRF header, plus `extra` (an Idempotency-Key on pay). */
export function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { "X-Portal-CSRF": csrfToken(), ...extra };
}

export const client = new Client({
  url: "/graphql",
  exchanges: [cacheExchange, fetchExchange],
  preferGetMethod: false,
  requestPolicy: "network-only",
  fetchOptions: () => ({ credentials: "same-origin", headers: headers() }),
});

/** True when the credential is gone (expired, revoked, or never set): the portal shows the expired page. */
export function isExpired(error: CombinedError | undefined): boolean {
  if (!error) return false;
  const status = (error.response as Response | undefined)?.status;
  return (
    status === 401 ||
    status === 403 ||
    error.graphQLErrors.some((e) => e.extensions?.code === "authentication_required")
  );
}

/** The message of a failed operation, for the customer. */
export function errorMessage(error: CombinedError): string {
  return error.graphQLErrors.map((e) => e.message).join(" ") || error.message;
}
