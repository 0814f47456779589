/**
 * Lookups for the use cases: the reference lists (document types, currencies), a document's
 * customer, and the organization's today. An unknown or malformed value becomes a field error in
 * the caller's collector, so one 400 names every field.
 */
import type { FieldErrorCollector } from "../domain/errors.js";
import { todayIn } from "../domain/formats.js";
import type { Currency, DocumentType } from "../infra/prisma/generated/client.js";
import { tenant, type ServiceContext } from "./context.js";

interface ReferenceData {
  documentTypes: Map<string, Readonly<DocumentType>>;
  currencies: Map<string, Readonly<Currency>>;
}

let reference: Promise<ReferenceData> | null = null;

/**
 * Document types and currencies, read once per process: only migrations write these tables, and
 * the service migrates before it serves (docs/performance.md "Reference data"). A failed read is
 * tried again by the next caller.
 */
function referenceData(ctx: ServiceContext): Promise<ReferenceData> {
  if (!reference) {
    reference = (async () => {
      // one after the other: the caller may be inside a transaction (one connection)
      const documentTypes = await ctx.prisma.documentType.findMany();
      const currencies = await ctx.prisma.currency.findMany();
      return {
        documentTypes: new Map(documentTypes.map((row) => [row.id, Object.freeze(row)])),
        currencies: new Map(currencies.map((row) => [row.id, Object.freeze(row)])),
      };
    })();
    reference.catch(() => (reference = null));
  }
  return reference;
}

/** Loads a document type by id (`CL33`); adds a field error under `field` when unknown. */
export async function findDocumentType(
  ctx: ServiceContext,
  id: string,
  errors: FieldErrorCollector,
  field = "document",
) {
  const documentType = (await referenceData(ctx)).documentTypes.get(id.toUpperCase()) ?? null;
  if (!documentType) errors.add(field, `unknown document type ${id}`);
  return documentType;
}

/** Loads a currency by ISO code; adds a field error when unknown or malformed. */
export async function findCurrency(ctx: ServiceContext, id: string, errors: FieldErrorCollector, field = "currency") {
  if (!/^[A-Za-z]{3}$/.test(id)) {
    errors.add(field, "must be a three-letter ISO 4217 code");
    return null;
  }
  const currency = (await referenceData(ctx)).currencies.get(id.toUpperCase()) ?? null;
  if (!currency) errors.add(field, `unknown currency ${id.toUpperCase()}`);
  return currency;
}

/** Spec "Limits": a state code has at most six characters. */
export const STATE_CODE_MAX_LENGTH = 6;

/**
 * Resolves a state given as its code (`RM`) or ISO id (`CL-RM`). When `countryId` has seeded
 * states (Chile) it must be one of them; otherwise any text of at most six characters is kept as
 * the code. Empty or null clears it. Problems become field errors under `field`.
 */
export async function resolveState(
  ctx: ServiceContext,
  countryId: string | null,
  text: string | null,
  errors: FieldErrorCollector,
  field = "state",
): Promise<{ id: string | null; code: string | null }> {
  if (text === null || text === "") return { id: null, code: null };
  if (text.length > STATE_CODE_MAX_LENGTH) {
    errors.add(field, `must have at most ${STATE_CODE_MAX_LENGTH} characters`);
    return { id: null, code: null };
  }
  const states = countryId ? await ctx.prisma.state.findMany({ where: { countryId } }) : [];
  const wanted = text.toUpperCase();
  const state = states.find((s) => s.code.toUpperCase() === wanted || s.id.toUpperCase() === wanted);
  if (state) return { id: state.id, code: state.code };
  if (states.length > 0) errors.add(field, `unknown state ${text} for country ${countryId}`);
  return { id: null, code: text };
}

/** A customer of the caller for a document; a field error (not a 404) when missing or unknown. */
export async function findDocumentCustomer(
  ctx: ServiceContext,
  id: string | null | undefined,
  errors: FieldErrorCollector,
  field = "customer",
) {
  if (!id) {
    errors.add(field, "is required");
    return null;
  }
  // with what a new document's answer shows of it (its country) and the organization's time zone
  // (the default document date): one statement (infra/sql/joined-reads.ts)
  const customer = await ctx.prisma.customer.findFirst({
    where: { id, ...tenant(ctx) },
    include: { country: true, organization: { select: { timeZone: true } } },
  });
  if (!customer) errors.add(field, `unknown customer ${id}`);
  return customer;
}

/** Today (`yyyy-mm-dd`) in the caller organization's time zone: the default document date. */
export async function organizationToday(ctx: ServiceContext): Promise<string> {
  const org = await ctx.prisma.organization.findUniqueOrThrow({
    where: { id: ctx.auth.organizationId },
    select: { timeZone: true },
  });
  return todayIn(org.timeZone, ctx.now());
}
