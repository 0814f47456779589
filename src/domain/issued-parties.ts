/**
 * The parties of an issued document (docs/decisions.md "Issued documents"; docs/invoice-totals.md
 * "Issued documents never change"): at finalize an invoice, order or credit note stores what it
 * was issued with, the customer record and the issuer (the organization's tax profile), and from
 * then on every reader (REST, GraphQL, PDF, reminder attachments, the DTE) takes the parties from
 * that snapshot. Drafts read live data. Pure functions: the service
 * (services/issued-parties.ts) loads the rows and stores the JSON.
 *
 * The snapshot JSON (columns `customerSnapshot` and `issuerSnapshot` of Invoice, Order and
 * CreditNote; migration 20261124010000_issued_snapshots backfills it in SQL with the same keys):
 *
 *   customerSnapshot: { id, name, address, countryId, stateId, stateCode, currencyId, email,
 *                       phone, website, taxId, activity, commune, city, contacts, taxSettings,
 *                       metadata, createdAt, updatedAt } (the Customer columns, timestamps ISO 8601 UTC;
 *                       activity, commune and city since migration 2026112501000000, absent
 *                       from older snapshots and read as null)
 *   issuerSnapshot:   { name, taxId, businessName, activity, activityCodes, address, commune, city,
 *                       resolutionNumber, resolutionDate, locale?, siiOffice? } (locale: the organization's
 *                       print locale when one was set at finalize; absent = the document's country's
 *                       language, so an issued document prints in the language it was issued in;
 *                       siiOffice: the SII office of the issuer's commune then, so a later change of
 *                       the office table does not change what an issued document prints)
 *
 * Worked example: customer `{ name: "Cliente SpA", activity: "Retail" }` finalized, then renamed
 * "Otro": the document's customer still reads name "Cliente SpA" and activity "Retail".
 */
import { siiOfficeOf } from "./chile-communes.js";

/** The Customer columns an issued document keeps (a Prisma Customer row has all of them). */
export interface CustomerColumns {
  id: string;
  name: string | null;
  address: string | null;
  countryId: string | null;
  stateId: string | null;
  stateCode: string | null;
  currencyId: string | null;
  email: string | null;
  phone: string | null;
  website: string | null;
  taxId: string | null;
  activity: string | null;
  commune: string | null;
  city: string | null;
  contacts: unknown;
  taxSettings: unknown;
  metadata: unknown;
  createdAt: Date;
  updatedAt: Date;
}

/** The customer as issued: its columns at finalize, timestamps as ISO 8601 UTC strings. */
export type IssuedCustomer = Omit<CustomerColumns, "createdAt" | "updatedAt"> & {
  createdAt: string;
  updatedAt: string;
};

/**
 * The issuer as issued. `name` is the name the document prints: the tax profile's business name
 * (SII RznSoc), else the organization's branding business name, else the organization's name.
 * The other fields are the tax profile (services/tax-profile.ts); `resolutionDate` `yyyy-mm-dd`.
 */
export interface IssuedIssuer extends IssuerProfile {
  name: string;
  /**
   * the SII office printed under the folio ("S.I.I. - <office>"), from the commune when the snapshot was taken;
   * absent from snapshots taken before it was kept (then read from the commune at print time)
   */
  siiOffice?: string | null;
}

/** The tax profile fields the issuer is made of (services/tax-profile.ts TaxProfile has them). */
export interface IssuerProfile {
  taxId: string | null;
  businessName: string | null;
  activity: string | null;
  activityCodes: string[];
  address: string | null;
  commune: string | null;
  city: string | null;
  resolutionNumber: number | null;
  resolutionDate: string | null;
  /** the print locale (`es`, `en`) when the organization set one (TaxProfile.locale) */
  locale?: string | null;
}

/** The customer's columns as they go into the snapshot (key order fixed, so equal rows give equal JSON). */
export function customerSnapshot(c: CustomerColumns): IssuedCustomer {
  return {
    id: c.id,
    name: c.name,
    address: c.address,
    countryId: c.countryId,
    stateId: c.stateId,
    stateCode: c.stateCode,
    currencyId: c.currencyId,
    email: c.email,
    phone: c.phone,
    website: c.website,
    taxId: c.taxId,
    activity: c.activity,
    commune: c.commune,
    city: c.city,
    contacts: c.contacts ?? [],
    taxSettings: c.taxSettings ?? {},
    metadata: c.metadata ?? {},
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/**
 * The issuer from the organization (`name`, branding `businessName`) and its tax profile. The
 * printed name rule lives here and nowhere else.
 */
export function issuerSnapshot(
  org: { name: string; businessName: string | null },
  profile: IssuerProfile,
): IssuedIssuer {
  return {
    name: profile.businessName ?? org.businessName ?? org.name,
    taxId: profile.taxId,
    businessName: profile.businessName,
    activity: profile.activity,
    activityCodes: [...profile.activityCodes],
    address: profile.address,
    commune: profile.commune,
    city: profile.city,
    resolutionNumber: profile.resolutionNumber,
    resolutionDate: profile.resolutionDate,
    ...(profile.locale ? { locale: profile.locale } : {}),
    ...withSiiOffice(siiOfficeOf(profile.commune)),
  };
}

/** `{ siiOffice }` when the commune has one, else nothing (as `locale`, the key is absent when unknown). */
function withSiiOffice(office: string | null): { siiOffice?: string } {
  return office ? { siiOffice: office } : {};
}

/** A document's state as far as its parties go. */
export interface DocumentWithSnapshot {
  status: string;
  customerSnapshot?: unknown;
  issuerSnapshot?: unknown;
}

/** Whether the document reads its parties from its snapshot: once finalized (and snapshotted). */
export function readsSnapshot(doc: DocumentWithSnapshot): boolean {
  return doc.status !== "draft";
}

/**
 * The customer columns the document shows: the snapshot's once finalized, else `live`'s (a
 * finalized document without a snapshot cannot exist after the migration; it falls back to
 * live). Other keys of `live` (relations, columns outside the snapshot) are kept; the caller
 * reloads relations whose ids changed (services/issued-parties.ts).
 */
export function customerAsIssued<T extends CustomerColumns>(doc: DocumentWithSnapshot, live: T): T {
  const snap = doc.customerSnapshot as IssuedCustomer | null | undefined;
  if (!readsSnapshot(doc) || !snap) return live;
  return {
    ...live,
    id: snap.id,
    name: snap.name,
    address: snap.address,
    countryId: snap.countryId,
    stateId: snap.stateId,
    stateCode: snap.stateCode,
    currencyId: snap.currencyId,
    email: snap.email,
    phone: snap.phone,
    website: snap.website,
    taxId: snap.taxId,
    activity: snap.activity ?? null,
    commune: snap.commune ?? null,
    city: snap.city ?? null,
    contacts: snap.contacts,
    taxSettings: snap.taxSettings,
    metadata: snap.metadata,
    createdAt: new Date(snap.createdAt),
    updatedAt: new Date(snap.updatedAt),
  };
}

/** The issuer the document was issued with: its snapshot once finalized, null on drafts (they show the issuer now). */
export function issuedIssuerOf(doc: DocumentWithSnapshot): IssuedIssuer | null {
  const snap = doc.issuerSnapshot as IssuedIssuer | null | undefined;
  return readsSnapshot(doc) && snap ? snap : null;
}

/** The receiver details a DTE and a printed document show (SII GiroRecep, CmnaRecep, CiudadRecep). */
export interface ReceiverDetails {
  activity: string | null;
  commune: string | null;
  city: string | null;
}

/**
 * The customer's activity (giro), commune and city: its columns, and for a customer saved before
 * they existed, the same keys of its `tax_settings` (where they were kept until then; the
 * migration copies nothing). Blank texts read as null.
 */
export function receiverDetails(customer: {
  activity?: string | null;
  commune?: string | null;
  city?: string | null;
  taxSettings: unknown;
}): ReceiverDetails {
  const settings = (customer.taxSettings ?? {}) as Record<string, unknown>;
  const pick = (key: keyof ReceiverDetails) => {
    const column = customer[key];
    if (typeof column === "string" && column.trim()) return column;
    const value = settings[key];
    return typeof value === "string" && value.trim() ? value : null;
  };
  return { activity: pick("activity"), commune: pick("commune"), city: pick("city") };
}
