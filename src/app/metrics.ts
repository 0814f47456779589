/**
 * The series /metrics serves (docs/operations.md "/metrics"): node's defaults, the business and health series
 * (services/metrics.ts), and the HTTP surfaces' own: requests by surface and status, their duration, and the live
 * event streams.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Database } from "../infra/database.js";
import { registerBusinessMetrics, type BusinessMetrics } from "../services/metrics.js";

/** Which surface a request path belongs to: `/graphql...`, `/v1...`, or anything else. */
export type Surface = "graphql" | "rest" | "other";

/** The surface of a request path (the label of the HTTP series). */
export function surfaceOf(pathname: string): Surface {
  return pathname.startsWith("/graphql") ? "graphql" : pathname.startsWith("/v1") ? "rest" : "other";
}

/** An app's series and what records them. */
export interface AppMetrics {
  registry: Registry;
  business: BusinessMetrics;
  /** counts an answered request (billing_http_requests_total) and, when `seconds` is given, its duration */
  answered(surface: Surface, status: number, seconds?: number): void;
  /** counts a live event stream the server ended (billing_event_streams_ended_total): `behind`, `shutdown` */
  streamEnded(reason: string): void;
}

/**
 * Registers every series of an app on a registry of its own; `openStreams` is read at each scrape for
 * billing_event_streams_open (GraphQL `events` subscriptions open now).
 */
export function createAppMetrics(database: Database, openStreams: () => number): AppMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // database-backed series are read at each scrape (services/metrics.ts)
  const business = registerBusinessMetrics(registry, database.prisma, database.pool);
  const registers = [registry];
  const streamsEnded = new Counter({
    name: "billing_event_streams_ended_total",
    help: "Live event streams the server ended: behind (the client read too slowly), shutdown",
    labelNames: ["reason"],
    registers,
  });
  new Gauge({
    name: "billing_event_streams_open",
    help: "Live event streams (GraphQL events subscriptions) open now",
    registers,
    collect() {
      this.set(openStreams());
    },
  });
  const requests = new Counter({
    name: "billing_http_requests_total",
    help: "HTTP requests by surface and status",
    labelNames: ["surface", "status"],
    registers,
  });
  const duration = new Histogram({
    name: "billing_http_request_duration_seconds",
    help: "HTTP request duration by surface",
    labelNames: ["surface"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  return {
    registry,
    business,
    answered(surface, status, seconds) {
      requests.inc({ surface, status: String(status) });
      if (seconds !== undefined) duration.observe({ surface }, seconds);
    },
    streamEnded: (reason) => streamsEnded.inc({ reason }),
  };
}
