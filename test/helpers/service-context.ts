/**
 * The services' unit tests (test/services/) call src/services/ directly, without HTTP: a fresh
 * database cloned from the run's migrated template (test/helpers/databases.ts), the test servers'
 * organizations (test/helpers/acme.ts createTestOrganizations), and a ServiceContext for `acme` and
 * `other` in test mode, as a request's would be; events are printed as the server prints them.
 */
import { inject } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { createDatabase, type Database } from "../../src/infra/database.js";
import type { CreatedApiKey } from "../../src/services/api-keys.js";
import { createCustomer } from "../../src/services/customers.js";
import type { ServiceContext } from "../../src/services/context.js";
import { installEventPrinter } from "../../src/services/events.js";
import { restEventPrinter } from "../../src/rest/event-objects.js";
import { DomainError } from "../../src/domain/errors.js";
import { cloneTemplate } from "./databases.js";
import { createTestOrganizations } from "./acme.js";

export interface ServiceDatabase {
  database: Database;
  /** Acme SpA in test mode, as its test key's requests see it */
  acme: ServiceContext;
  /** Other Ltda in test mode */
  other: ServiceContext;
  close(): Promise<void>;
}

function contextOf(database: Database, key: CreatedApiKey, userEmail: string): ServiceContext {
  return {
    prisma: database.prisma,
    auth: { organizationId: key.organization, testMode: true, userEmail, apiKeyId: key.id },
    now: () => new Date(),
    settings: DEFAULT_SETTINGS,
    baseUrl: "http://localhost",
  };
}

/** A fresh database with the two organizations; `close` closes and drops it. */
export async function startServiceDatabase(): Promise<ServiceDatabase> {
  // the use cases write events (customer.created, ...) printed as the REST API prints them, as in the server
  installEventPrinter(restEventPrinter);
  const { target, drop } = await cloneTemplate(inject("template"));
  const database = await createDatabase(target);
  const { acme, other } = await createTestOrganizations(database.prisma);
  return {
    database,
    acme: contextOf(database, acme, "ops@acme.cl"),
    other: contextOf(database, other, "ops@other.cl"),
    async close() {
      await database.close();
      await drop();
    },
  };
}

/**
 * A Chilean business customer of Acme, "Cliente SpA" with RUT 76042235-5 (a CL33 is its default invoice), created
 * through the customers service; its `cus_` id.
 */
export async function chileanCustomerOf(s: ServiceDatabase): Promise<string> {
  return (await createCustomer(s.acme, { name: "Cliente SpA", country: "CL", taxId: "76042235-5" })).id;
}

/**
 * The domain error `call` rejects with, as the API would answer it: its code, message and fields
 * (path -> reasons, in the order they were found). Fails when `call` resolves or throws anything else.
 */
export async function rejection(
  call: Promise<unknown>,
): Promise<{ code: string; status: number; message: string; fields: Record<string, string[]> }> {
  let error: unknown;
  try {
    await call;
  } catch (e) {
    error = e;
  }
  if (!(error instanceof DomainError)) throw new Error(`expected a domain error, got ${String(error)}`);
  return { code: error.code, status: error.status, message: error.message, fields: { ...(error.fields ?? {}) } };
}
