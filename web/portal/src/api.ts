/**
 * The portal's GraphQL client (web/shared/graphql.ts): same-origin /graphql with the HttpOnly credential cookie
 * and the X-Portal-CSRF header (the readable portal_csrf cookie's value), which the service requires of every
 * cookie-authenticated request.
 */
import { cookieClient } from "../../shared/graphql.js";

export { errorMessage, isExpired } from "../../shared/graphql.js";

export const { client, headers } = cookieClient("portal_csrf", "X-Portal-CSRF");
