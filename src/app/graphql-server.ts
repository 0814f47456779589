/**
 * The GraphQL server (graphql-yoga) over the one schema, with its plugins (persisted queries, the document limits,
 * subscriptions over Server-Sent Events, the time budget) and the context every operation gets: /graphql and the REST
 * adapter's operations run through it alike (docs/graphql.md, docs/limits.md).
 */
import { randomUUID } from "node:crypto";
import { createYoga, type GraphiQLOptions } from "graphql-yoga";
import { createInMemoryAPQStore, useAPQ } from "@graphql-yoga/plugin-apq";
import { schema } from "../graphql/schema.js";
import { subscriptionsOverSsePlugin } from "../graphql/operation-types.js";
import type { GraphQLContext } from "../graphql/context.js";
import { maskError } from "../graphql/errors.js";
import { documentLimitPlugins, enforceDeadlines, timeBudgetPlugin } from "../graphql/limits.js";
import type { EventFeeds } from "../graphql/event-feed.js";
import { requestDatabase } from "../services/request-transaction.js";
import type { AppSettings } from "../infra/config.js";
import type { Logger } from "../infra/logger.js";
import type { Mailer } from "../infra/mail.js";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import type { RequestAuth } from "./credentials.js";

/**
 * Apollo's automatic persisted queries (docs/graphql.md "Persisted queries"): the documents sent
 * with their SHA-256 hash are kept in memory, per process, in an LRU of at most this many, each for
 * APQ_TTL_MS after it was stored; a hash no longer kept answers `PersistedQueryNotFound` and the
 * client sends the query again.
 */
export const APQ_MAX_DOCUMENTS = 1_000;
export const APQ_TTL_MS = 60 * 60 * 1000;

/**
 * GraphiQL at GET /graphql (Accept: text/html; pages/graphiql.ts): the page and its files come from
 * the service (`@graphql-yoga/render-graphiql`'s build, from node_modules), so it loads with no
 * request to a CDN and works offline. The headers editor starts as `{"Authorization": "Bearer "}`
 * for the API key, and GraphiQL keeps what is typed there in the browser's localStorage
 * (`shouldPersistHeaders`), so the key is remembered in that browser.
 */
export const GRAPHIQL_OPTIONS: GraphiQLOptions = {
  title: "Billing API",
  defaultHeaders: '{"Authorization": "Bearer "}',
  shouldPersistHeaders: true,
  defaultEditorToolsVisibility: "headers",
};

/** The Yoga instance of an app: fetch(request, { requestId, responseCookies }) answers a GraphQL request. */
export type AppYoga = ReturnType<typeof createYoga<Record<string, unknown>, GraphQLContext>>;

/** What the GraphQL server's context is made of. */
export interface GraphQLServerDeps {
  prisma: PrismaClient;
  settings: AppSettings;
  logger: Logger;
  /** absolute base URL for links; derived from each request when unset */
  publicUrl?: string;
  mailer: Mailer | null;
  eventFeeds: EventFeeds;
  requestAuth: RequestAuth;
}

/**
 * The app's Yoga: the schema with its deadlines enforced (graphql/limits.ts), APQ first (it fills in the query of a
 * hash at onParams, before the document limits parse it), then the document limits, subscriptions over SSE and the
 * time budget. CORS, the body's size and GraphiQL are answered before Yoga (app/guard.ts, http-server.ts,
 * app/routes.ts), so Yoga's own are off.
 */
export function createGraphQLServer(deps: GraphQLServerDeps): AppYoga {
  const { settings, logger } = deps;
  enforceDeadlines(schema);
  return createYoga<Record<string, unknown>, GraphQLContext>({
    schema,
    plugins: [
      useAPQ({ store: createInMemoryAPQStore({ max: APQ_MAX_DOCUMENTS, ttl: APQ_TTL_MS }) }),
      ...documentLimitPlugins(),
      subscriptionsOverSsePlugin(),
      timeBudgetPlugin(settings.graphqlTimeBudgetMs),
    ],
    cors: false, // CORS is answered for /graphql and /v1 alike in app/guard.ts (infra/http-security.ts)
    // the body's size is bounded before a request is made (http-server.ts MAX_BODY_BYTES, 5 MiB: 413 in the
    // surface's error shape); Yoga's own bound (25 MB) would pipe every body through one more web stream
    maxRequestBodySize: false,
    graphqlEndpoint: "/graphql",
    // GraphiQL is answered before Yoga (app/routes.ts, pages/graphiql.ts), with files of the service's own
    graphiql: false,
    landingPage: false,
    logging: false,
    maskedErrors: { maskError: (error) => maskError(error, logger) },
    context: ({ request, responseCookies, requestId }) => operationContext(deps, request, responseCookies, requestId),
  });
}

/**
 * The context of one operation: its database (a keyed request's own transaction, else the client), who asks, the
 * request id (the one app/routes.ts gave the request on /graphql, else the header of an operation the REST adapter
 * runs in process, else a new one), a child logger, and the cookies the operation may set.
 */
async function operationContext(
  deps: GraphQLServerDeps,
  request: Request,
  responseCookies: unknown,
  given: unknown,
): Promise<GraphQLContext> {
  const requestId = (typeof given === "string" ? given : null) ?? request.headers.get("x-request-id") ?? randomUUID();
  // a keyed request runs in its own transaction (app/idempotent.ts): every query goes there
  const db = requestDatabase() ?? deps.prisma;
  const auth = await deps.requestAuth(db, request);
  return {
    prisma: db,
    auth,
    now: () => new Date(),
    settings: deps.settings,
    baseUrl: deps.publicUrl ?? new URL(request.url).origin,
    requestId,
    logger: deps.logger.child({ requestId }),
    mailer: deps.mailer,
    responseCookies: Array.isArray(responseCookies) ? (responseCookies as string[]) : undefined,
    eventFeeds: deps.eventFeeds,
  } as GraphQLContext;
}
