/**
 * Customers (spec "Customer"; REST /v1/customers/, GraphQL createCustomer/updateCustomer).
 * Rules: country is a known two-letter ISO 3166-1 code; state is at most six characters and,
 * when the country has seeded states, one of them (code `RM` or id `CL-RM`); currency a known
 * ISO 4217 code; Chilean customers' tax_id a valid RUT, stored normalized (`76042235-5`);
 * activity (giro, SII's GiroRecep) at most 40 characters; a Chilean customer's commune one of
 * Chile's comunas (domain/chile-communes.ts, any case or accents, stored by its official name) and
 * its city at most 20 characters (SII's CiudadRecep), other customers' at most 100;
 * metadata merges (an empty value removes a key); dunning_campaign a campaign of the caller's
 * organization and mode, or null for the default one (docs/dunning.md).
 */
import type { Prisma } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { FieldErrorCollector, NotFoundError } from "../domain/errors.js";
import { isEmailAddress, isHttpUrl } from "../domain/formats.js";
import { mergeMetadata, type Metadata } from "../domain/metadata.js";
import { normalizeRut } from "../domain/rut.js";
import { findCommune } from "../domain/chile-communes.js";
import { atomically, checkPortalCustomer, lockTenantRow, tenant, type ServiceContext } from "./context.js";
import { printedObjects, recordEvents } from "./events.js";
import { findCurrency, resolveState } from "./reference.js";
import { resolveTestClock } from "./test-clocks.js";
import { resolveDunningCampaign } from "./dunning-campaigns.js";

export interface ContactInput {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  role?: string | null;
}

export interface CustomerInput {
  name?: string | null;
  address?: string | null;
  country?: string | null;
  state?: string | null;
  currency?: string | null;
  email?: string | null;
  phone?: string | null;
  website?: string | null;
  taxId?: string | null;
  /** giro (SII GiroRecep), at most 40 characters */
  activity?: string | null;
  /** comuna (SII CmnaRecep): for a Chilean customer one of Chile's comunas */
  commune?: string | null;
  /** city (SII CiudadRecep) */
  city?: string | null;
  contacts?: ContactInput[] | null;
  taxSettings?: Record<string, unknown> | null;
  metadata?: Record<string, unknown> | null;
  /**
   * test mode only, at creation only: id of the test clock whose time the customer lives on (services/test-clocks.ts)
   */
  testClock?: string | null;
  /** `dun_` id of a dunning campaign of the caller's organization and mode; null or "": the default campaign */
  dunningCampaign?: string | null;
  /** true: no dunning campaign acts on the customer */
  excludeFromDunning?: boolean | null;
}

/** Loads a customer of the caller's organization and mode; NotFoundError (404) otherwise. */
export async function getCustomer(ctx: ServiceContext, id: string) {
  const customer = await ctx.prisma.customer.findFirst({ where: { id, ...tenant(ctx) } });
  if (!customer) throw new NotFoundError("customer", id);
  return customer;
}

/** SII's GiroRecep: at most 40 characters. */
export const ACTIVITY_MAX_LENGTH = 40;
/** SII's CiudadRecep: a Chilean customer's city has at most 20 characters. */
export const CHILEAN_CITY_MAX_LENGTH = 20;

type CustomerColumns = Omit<Prisma.CustomerUncheckedCreateInput, "id" | "organizationId" | "testMode">;

/** The stored columns of a customer an update is checked over. */
interface CurrentCustomer {
  countryId: string | null;
  stateId: string | null;
  stateCode: string | null;
  metadata: Metadata;
  taxId: string | null;
  commune: string | null;
  city: string | null;
}

/**
 * What every step of resolveCustomerColumns reads and writes: the context, the input, the stored
 * customer (null on create), the one error collector, and `data`, the columns set so far (only those
 * the input changes, in the order the steps set them).
 */
interface Resolving {
  ctx: ServiceContext;
  input: CustomerInput;
  current: CurrentCustomer | null;
  /** every field problem: resolveCustomerColumns throws them together (one 400) after the last step */
  errors: FieldErrorCollector;
  data: CustomerColumns;
}

/**
 * The columns of a create or an update from `input` (over `current` on update), in named steps.
 * Every problem is a field error: ValidationError "Invalid customer" (400) naming them all; nothing
 * is written here.
 */
async function resolveCustomerColumns(
  ctx: ServiceContext,
  input: CustomerInput,
  current: CurrentCustomer | null,
): Promise<CustomerColumns> {
  const r: Resolving = { ctx, input, current, errors: new FieldErrorCollector(), data: {} };
  checkContactColumns(r);
  const countryId = await resolveCountryAndState(r);
  if (input.currency !== undefined) {
    r.data.currencyId = input.currency ? ((await findCurrency(ctx, input.currency, r.errors))?.id ?? null) : null;
  }
  checkTaxId(r, countryId);
  textColumn(r, "activity", ACTIVITY_MAX_LENGTH);
  checkCommuneAndCity(r, countryId === "CL");
  checkContactsAndSettings(r);
  await resolveTestClockAndDunning(r);
  r.errors.throwIfAny("Invalid customer");
  return r.data;
}

/** Sets text column `field` when sent ("" is null), at most `max` characters. Field error: its snake_case name. */
function textColumn(
  { input, errors, data }: Resolving,
  field: keyof CustomerInput & keyof CustomerColumns,
  max: number,
) {
  const value = input[field];
  if (value === undefined) return;
  if (value !== null && typeof value === "string" && value.length > max)
    errors.add(snake(field), `must have at most ${max} characters`);
  (data as Record<string, unknown>)[field] = value === "" ? null : value;
}

/**
 * `name` (200 characters), `address` (500), `phone` (40), `email` (an e-mail address) and `website`
 * (an http(s) URL), each when sent; "" is null. Field errors: those names.
 */
function checkContactColumns(r: Resolving): void {
  const { input, errors, data } = r;
  textColumn(r, "name", 200);
  textColumn(r, "address", 500);
  textColumn(r, "phone", 40);
  if (input.email !== undefined) {
    if (input.email && !isEmailAddress(input.email)) errors.add("email", "must be an e-mail address");
    data.email = input.email || null;
  }
  if (input.website !== undefined) {
    if (input.website && !isHttpUrl(input.website)) errors.add("website", "must be an http(s) URL");
    data.website = input.website || null;
  }
}

/**
 * The country (a known two-letter ISO 3166-1 code, stored upper case: 1 query; null or "" clears it)
 * and the state, re-checked when it or the country changes (services/reference.ts resolveState).
 * Returns the customer's country id after the change. Field errors: `country`, `state`.
 */
async function resolveCountryAndState({ ctx, input, current, errors, data }: Resolving): Promise<string | null> {
  let countryId = current?.countryId ?? null;
  if (input.country !== undefined) {
    if (input.country === null || input.country === "") countryId = null;
    else if (!/^[A-Za-z]{2}$/.test(input.country)) errors.add("country", "must be a two-letter ISO 3166-1 code");
    else {
      const country = await ctx.prisma.country.findUnique({ where: { id: input.country.toUpperCase() } });
      if (!country) errors.add("country", `unknown country ${input.country.toUpperCase()}`);
      countryId = country?.id ?? null;
    }
    data.countryId = countryId;
  }
  // state: re-checked when it or the country changes
  const stateText =
    input.state !== undefined
      ? input.state
      : input.country !== undefined
        ? (current?.stateCode ?? current?.stateId ?? null)
        : undefined;
  if (stateText !== undefined) {
    const state = await resolveState(ctx, countryId, stateText, errors);
    data.stateId = state.id;
    data.stateCode = state.code;
  }
  return countryId;
}

/**
 * `tax_id`, re-checked when it or the country changes: a Chilean customer's is a valid RUT, stored
 * normalized (`76042235-5`); at most 40 characters; "" is null. Field error: `tax_id`.
 */
function checkTaxId({ input, current, errors, data }: Resolving, countryId: string | null): void {
  const taxId = input.taxId !== undefined ? input.taxId || null : (current?.taxId ?? null);
  if (input.taxId === undefined && input.country === undefined) return;
  if (taxId && countryId === "CL") {
    const rut = normalizeRut(taxId);
    if (!rut)
      errors.add("tax_id", "must be a valid Chilean RUT (for example 76042235-5); the check digit does not match");
    data.taxId = rut ?? taxId;
  } else {
    data.taxId = taxId;
  }
  if (taxId && taxId.length > 40) errors.add("tax_id", "must have at most 40 characters");
}

/**
 * `commune` and `city`, re-checked when they or the country change ("" is null): a Chilean
 * customer's commune is one of Chile's comunas (any case or accents, stored by its official name)
 * and its city at most CHILEAN_CITY_MAX_LENGTH characters; other customers' at most 100 each.
 * Field errors: `commune`, `city`.
 */
function checkCommuneAndCity({ input, current, errors, data }: Resolving, chilean: boolean): void {
  const commune =
    input.commune !== undefined
      ? input.commune || null
      : input.country !== undefined
        ? (current?.commune ?? null)
        : undefined;
  if (commune !== undefined) {
    if (commune && chilean) {
      const known = findCommune(commune);
      if (!known)
        errors.add(
          "commune",
          `unknown comuna ${JSON.stringify(commune)}: a Chilean customer's commune must be one of Chile's comunas ` +
            `(for example Ñuñoa)`,
        );
      data.commune = known?.name ?? commune;
    } else {
      if (commune && commune.length > 100) errors.add("commune", "must have at most 100 characters");
      data.commune = commune;
    }
  }
  const city =
    input.city !== undefined ? input.city || null : input.country !== undefined ? (current?.city ?? null) : undefined;
  if (city !== undefined) {
    const max = chilean ? CHILEAN_CITY_MAX_LENGTH : 100;
    if (city && city.length > max)
      errors.add("city", `must have at most ${max} characters${chilean ? " (SII's CiudadRecep)" : ""}`);
    data.city = city;
  }
}

/**
 * `contacts` (replaced; each e-mail an e-mail address; absent fields stored as null),
 * `tax_settings` (null is {}) and `metadata` (merged over the stored; an empty value removes a key).
 * Field errors: `contacts.<i>.email`, `metadata`.
 */
function checkContactsAndSettings({ input, current, errors, data }: Resolving): void {
  if (input.contacts !== undefined) {
    const contacts = input.contacts ?? [];
    contacts.forEach((contact, i) => {
      if (contact.email && !isEmailAddress(contact.email))
        errors.add(`contacts.${i}.email`, "must be an e-mail address");
    });
    data.contacts = contacts.map((c) => ({
      name: c.name ?? null,
      email: c.email ?? null,
      phone: c.phone ?? null,
      role: c.role ?? null,
    }));
  }
  if (input.taxSettings !== undefined) data.taxSettings = (input.taxSettings ?? {}) as Prisma.InputJsonValue;
  if (input.metadata !== undefined) {
    errors.collect(() => {
      data.metadata = mergeMetadata(current?.metadata ?? {}, input.metadata);
    });
  }
}

/**
 * `test_clock` (at creation only: services/test-clocks.ts resolveTestClock), `dunning_campaign` (a
 * campaign of the caller's organization and mode, or null for the default: 1 query) and
 * `exclude_from_dunning` (null is false). Field errors: `test_clock`, `dunning_campaign`.
 */
async function resolveTestClockAndDunning({ ctx, input, current, errors, data }: Resolving): Promise<void> {
  if (input.testClock !== undefined) {
    if (current) errors.add("test_clock", "is set when the customer is created and cannot change");
    else data.testClockId = await resolveTestClock(ctx, input.testClock, errors);
  }
  if (input.dunningCampaign !== undefined)
    data.dunningCampaignId = await resolveDunningCampaign(ctx, input.dunningCampaign, errors);
  if (input.excludeFromDunning !== undefined) data.excludeFromDunning = input.excludeFromDunning ?? false;
}

function snake(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Creates a customer; ValidationError (400) names each bad field and nothing is written. */
export async function createCustomer(ctx: ServiceContext, input: CustomerInput) {
  const data = await resolveCustomerColumns(ctx, input, null);
  return atomically(ctx, async (tx) => {
    // the campaign checked above, locked until the customer is written (services/dunning-campaigns.ts)
    if (data.dunningCampaignId) {
      const errors = new FieldErrorCollector();
      await resolveDunningCampaign(tx, data.dunningCampaignId, errors);
      errors.throwIfAny("Invalid customer");
    }
    const created = await tx.prisma.customer.create({ data: { ...data, id: newId("cus"), ...tenant(ctx) } });
    await recordEvents(tx, "customer.created", "customer", [created.id]);
    return created;
  });
}

/** The customer fields a customer-portal credential may change (docs/customer-portal.md). */
export const PORTAL_CUSTOMER_FIELDS: ReadonlySet<string> = new Set(["email", "address"]);

/**
 * Updates the given fields of a customer; 404 for another tenant's customer, 400 for bad input.
 * A customer-portal credential may update its own customer only (404 for any other) and only
 * PORTAL_CUSTOMER_FIELDS (400 naming any other given field).
 */
export async function updateCustomer(ctx: ServiceContext, id: string, input: CustomerInput) {
  checkPortalCustomer(ctx, id, "customer", id);
  if (ctx.auth.portal) {
    const errors = new FieldErrorCollector();
    for (const [field, value] of Object.entries(input))
      if (value !== undefined && !PORTAL_CUSTOMER_FIELDS.has(field))
        errors.add(field, "cannot be changed in the customer portal");
    errors.throwIfAny("Invalid customer");
  }
  return atomically(ctx, async (tx) => {
    // locked: concurrent updates queue, and the event's previous_attributes are this update's
    if (!(await lockTenantRow(tx.prisma, tx, "Customer", id))) throw new NotFoundError("customer", id);
    const current = await getCustomer(tx, id);
    const before = await printedObjects(tx, "customer", [id]);
    const data = await resolveCustomerColumns(tx, input, { ...current, metadata: current.metadata as Metadata });
    const updated = await tx.prisma.customer.update({ where: { id: current.id }, data });
    await recordEvents(tx, "customer.updated", "customer", [id], { before });
    return updated;
  });
}
