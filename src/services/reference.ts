/**
 * Lookups of the reference lists (document types, currencies) for the use cases; an unknown or
 * malformed value becomes a field error in the caller's collector, so one 400 names every field.
 */
import type { FieldErrorCollector } from "../domain/errors.js";
import type { ServiceContext } from "./context.js";

/** Loads a document type by id (`CL33`); adds a field error under `field` when unknown. */
export async function findDocumentType(ctx: ServiceContext, id: string, errors: FieldErrorCollector, field = "document") {
  const documentType = await ctx.prisma.documentType.findUnique({ where: { id: id.toUpperCase() } });
  if (!documentType) errors.add(field, `unknown document type ${id}`);
  return documentType;
}

/** Loads a currency by ISO code; adds a field error when unknown or malformed. */
export async function findCurrency(ctx: ServiceContext, id: string, errors: FieldErrorCollector, field = "currency") {
  if (!/^[A-Za-z]{3}$/.test(id)) {
    errors.add(field, "must be a three-letter ISO 4217 code");
    return null;
  }
  const currency = await ctx.prisma.currency.findUnique({ where: { id: id.toUpperCase() } });
  if (!currency) errors.add(field, `unknown currency ${id.toUpperCase()}`);
  return currency;
}

