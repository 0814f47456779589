/**
 * The dashboard's requests: GraphQL through the shared client (web/shared/graphql.ts) with the member's session
 * cookie, its X-Dashboard-CSRF header and X-Dashboard-Mode (test or live, the toggle's choice, kept in this
 * browser); and the JSON sign-in routes of src/pages/dashboard.ts, which run before there is a session.
 */
import { cookieClient } from "../../shared/graphql.js";

export { errorMessage, isExpired } from "../../shared/graphql.js";

export type Mode = "test" | "live";

const MODE_KEY = "dashboard-mode";

/** The data the member looks at: test unless they switched to live. */
export function currentMode(): Mode {
  return localStorage.getItem(MODE_KEY) === "live" ? "live" : "test";
}

export function saveMode(mode: Mode): void {
  localStorage.setItem(MODE_KEY, mode);
}

export const { client, headers } = cookieClient("dashboard_csrf", "X-Dashboard-CSRF", () => ({
  "X-Dashboard-Mode": currentMode(),
}));

/** A POST to a sign-in route: null when it succeeded, else the service's message. */
export async function post(path: string, body?: unknown): Promise<string | null> {
  const response = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", ...headers() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.ok) return null;
  const answer = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
  return answer?.error?.message ?? `HTTP ${response.status}`;
}
