/**
 * Subscriptions (spec "Subscription"; docs/subscriptions.md): a customer on one or more plans of
 * one currency and frequency, with addons and coupons, billed every cycle by the billing run (a
 * later step). This module creates, updates, cancels, pauses and resumes them; the rules without a
 * database live in domain/subscriptions.ts (plan checks, status machine, end date).
 *
 * - Cycles are billed in advance at their start: at creation `next_billing` = `date_start`,
 *   `next_billing_cycle` = 1, `previous_billing` = null.
 * - `billing_cycles` null runs until cancelled; set, `end_date` = start of cycle billing_cycles + 1.
 * - Lines and addons (and `date_start`) can be replaced while no cycle has been billed
 *   (`next_billing_cycle` = 1). Afterwards lines can change plan or quantity (same currency and
 *   frequency; metered lines stay) with proration (docs/proration.md; `proration_behavior`,
 *   `proration_date`, `at_period_end`); addons and `date_start` cannot: 409.
 */
import { Prisma, type Addon, type Coupon, type Plan, type Subscription } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { customerContext } from "./customer-clock.js";
import { couponTerms } from "./coupons.js";
import { chosenDocumentType, documentTypeMismatch } from "../domain/document-types.js";
import { FieldErrorCollector, InvalidStateError, NotFoundError, PermissionError } from "../domain/errors.js";
import { checkNoteLength } from "../domain/input-limits.js";
import { isIsoDate, isoDate, dateColumn, storedDate } from "../domain/formats.js";
import { assertCouponAttachable } from "../domain/coupons.js";
import { isOneOf, FREQUENCIES, type Frequency } from "../domain/catalogue.js";
import { toDecimal, type Decimal, type DecimalInput } from "../domain/money.js";
import {
  changeProrations,
  prorationBehavior,
  prorationPoint,
  type PendingChanges,
  type ProratedLine,
  type ProrationBehavior,
} from "../domain/proration.js";
import {
  MAX_AMOUNT_DECIMALS,
  priceQuantity,
  validateAddonRates,
  type AddonRate,
  type AddonRateInput,
} from "../domain/pricing.js";
import {
  DEFAULT_CANCEL_REASON,
  checkSubscriptionPlans,
  normalizeReason,
  subscriptionEndDate,
  subscriptionTransition,
  type SubscriptionStatus,
} from "../domain/subscriptions.js";
import { atomically, checkPortalCustomer, lockTenantRow, tenant, type ServiceContext } from "./context.js";
import { printedObjects, recordEvents } from "./events.js";
import type { EventType } from "../domain/events.js";
import { readSettings } from "./organization-settings.js";
import { Fields } from "./catalogue.js";
import { findDocumentType, findDocumentCustomer, organizationToday } from "./reference.js";
import { invoiceProrationsNow, storePendingItems } from "./proration.js";

export interface SubscriptionLineInput {
  /** `pla_` id (required) */
  plan?: string | null;
  /** units, more than 0 (default 1); metered plans: 1 (usage decides what is billed) */
  quantity?: DecimalInput | null;
  /** `cou_` id of a coupon for this line only */
  coupon?: string | null;
}

export interface SubscriptionAddonInput {
  /** `add_` id (required) */
  addon?: string | null;
  /** integer, at least 1 (default 1) */
  quantity?: number | null;
  /** shares of a one-time addon by cycle (default: the addon's rates) */
  rates?: AddonRateInput[] | null;
}

export interface SubscriptionInput {
  customer?: string | null;
  /** invoice document type of the cycle invoices (default CL33 for Chilean customers) */
  document?: string | null;
  dateStart?: string | null;
  endDate?: string | null;
  billingCycles?: number | null;
  lines?: SubscriptionLineInput[] | null;
  addons?: SubscriptionAddonInput[] | null;
  /** `cou_` id; null or "" removes the coupon */
  coupon?: string | null;
  expirationDays?: number | null;
  references?: unknown[] | null;
  note?: string | null;
  metadata?: Record<string, unknown> | null;
  taxSettings?: Record<string, unknown> | null;
  /** update only, lines changed after a billed cycle: create_prorations (default), none, always_invoice */
  prorationBehavior?: string | null;
  /** update only: the day prorations start (`yyyy-mm-dd` within the current period; default today) */
  prorationDate?: string | null;
  /** update only: true schedules the new lines for the next cycle (pendingChanges), no proration */
  atPeriodEnd?: boolean | null;
}

const DB_NULL = Prisma.DbNull;
export const MAX_SUBSCRIPTION_LINES = 100;
export const MAX_REFERENCES = 50;
const MAX_EXPIRATION_DAYS = 3650;

const CURRENT_INCLUDE = {
  lines: { orderBy: [{ position: "asc" }, { id: "asc" }], include: { plan: true } },
  addons: { orderBy: [{ position: "asc" }, { id: "asc" }], include: { addon: true } },
  coupon: true,
} satisfies Prisma.SubscriptionInclude;

type Current = Prisma.SubscriptionGetPayload<{ include: typeof CURRENT_INCLUDE }>;

/** Same lines as stored (plan, quantity, coupon, in order): sending them back is not a change. */
function sameLines(current: Current, lines: SubscriptionLineInput[]): boolean {
  if (lines.length !== current.lines.length) return false;
  return lines.every((l, i) => {
    const c = current.lines[i];
    let quantity: Decimal;
    try {
      quantity = toDecimal(l.quantity ?? 1);
    } catch {
      return false;
    }
    return l.plan === c.planId && quantity.eq(c.quantity.toString()) && (l.coupon || null) === c.couponId;
  });
}

function rateKey(rates: unknown): string {
  return JSON.stringify(
    ((rates ?? []) as AddonRate[]).map((r) =>
      "percent" in r
        ? [r.cycle, "percent", toDecimal(r.percent).toString()]
        : [r.cycle, "amount", toDecimal(r.amount).toString()],
    ),
  );
}

function sameAddons(current: Current, addons: SubscriptionAddonInput[]): boolean {
  if (addons.length !== current.addons.length) return false;
  return addons.every((a, i) => {
    const c = current.addons[i];
    if (a.addon !== c.addonId || (a.quantity ?? 1) !== c.quantity) return false;
    if (a.rates === undefined || a.rates === null) return true;
    try {
      return (
        rateKey(
          a.rates.map((r) =>
            r.percent !== undefined && r.percent !== null
              ? { cycle: r.cycle, percent: r.percent }
              : { cycle: r.cycle, amount: r.amount },
          ),
        ) === rateKey(c.rates)
      );
    } catch {
      return false;
    }
  });
}

/** The checked columns and child rows of a create or an update. */
interface Prepared {
  columns: {
    customerId: string;
    documentTypeId: string;
    dateStart: Date;
    endDate: Date | null;
    billingCycles: number | null;
    nextBilling: Date;
    couponId: string | null;
    couponRedemptions: number;
    expirationDays: number;
    references: Prisma.InputJsonValue;
    note: string | null;
    metadata: Prisma.InputJsonValue;
    taxSettings: Prisma.InputJsonValue;
  };
  /** null: keep the stored lines */
  lines: { id: string; position: number; planId: string; quantity: string; couponId: string | null }[] | null;
  /** the plans of `lines` (by id), for proration */
  plans: Map<string, Plan>;
  /** update of lines after a billed cycle: how to prorate, from which day */
  proration: { behavior: ProrationBehavior; requestedDate: string | null; atPeriodEnd: boolean } | null;
  /** null: keep the stored addons */
  addons: { id: string; position: number; addonId: string; quantity: number; rates: Prisma.InputJsonValue }[] | null;
}

/**
 * What every step of `prepare` reads: the use case's context, the input, the locked subscription
 * (null on create), the one collector of field errors, and what the input changes.
 */
interface Preparing {
  ctx: ServiceContext;
  input: SubscriptionInput;
  /** the locked subscription on update; null on create */
  current: Current | null;
  /** every field problem: `prepare` throws them together (one 400) after the last step */
  errors: FieldErrorCollector;
  /** catalogue field checks (currencies, metadata) over `errors` */
  fields: Fields;
  /** a cycle has been billed (`next_billing_cycle` > 1): addons and `date_start` are fixed */
  billed: boolean;
  /** `lines` sent, and on update not the stored lines sent back */
  linesChanged: boolean;
  /** `addons` sent, and on update not the stored addons sent back */
  addonsChanged: boolean;
}

/** The plans, addons and coupons the input names, read once (of the caller's organization and mode). */
interface Catalogue {
  /** the lines to check: `input.lines` when they change, else none */
  lineInputs: SubscriptionLineInput[];
  /** the addons to check: `input.addons` when they change, else none */
  addonInputs: SubscriptionAddonInput[];
  planById: Map<string, Plan>;
  addons: Addon[];
  couponById: Map<string, Coupon>;
}

/**
 * Validates `input` (over `current` on update) and computes every column, in named steps. Every
 * problem is a field error (ValidationError, one 400 naming them all, in the steps' order); a line
 * or addon change after the first billed cycle is a 409 (InvalidStateError, from whatChanges).
 */
async function prepare(ctx: ServiceContext, input: SubscriptionInput, current: Current | null): Promise<Prepared> {
  const errors = new FieldErrorCollector();
  const p: Preparing = { ctx, input, current, errors, fields: new Fields(ctx, errors), ...whatChanges(input, current) };
  const proration = checkProrationOptions(p);
  const { customer, documentId } = await resolveCustomerAndDocumentType(p);
  const catalogue = await loadCatalogue(p);
  const { lines, currencyId, frequency } = checkLines(p, catalogue);
  const { couponId, couponRedemptions } = resolveCoupons(p, catalogue.couponById, lines, currencyId);
  checkKeptAddons(p, currencyId);
  const addonRows = await checkAddons(p, catalogue, currencyId);
  const { dateStart, endDate, billingCycles } = await resolveDates(p, customer, frequency);
  const other = otherColumns(p);
  errors.throwIfAny("Invalid subscription");
  return {
    columns: {
      customerId: customer!.id,
      documentTypeId: documentId!.toUpperCase(),
      dateStart: dateColumn(dateStart),
      endDate: endDate ? dateColumn(endDate) : null,
      billingCycles,
      // nothing billed yet: the first cycle is billed (in advance) on its start
      nextBilling: current && p.billed ? current.nextBilling : dateColumn(dateStart),
      couponId,
      couponRedemptions,
      ...other,
    },
    lines,
    addons: addonRows,
    plans: catalogue.planById,
    proration,
  };
}

/**
 * Which parts `input` changes over `current` (null on create: none billed, lines and addons change
 * when sent). Lines or addons sent back as stored are no change. Throws InvalidStateError (409)
 * when a cycle has been billed and the addons or `date_start` change.
 */
function whatChanges(
  input: SubscriptionInput,
  current: Current | null,
): { billed: boolean; linesChanged: boolean; addonsChanged: boolean } {
  const billed = current ? current.nextBillingCycle > 1 : false;
  const linesChanged =
    input.lines !== undefined && input.lines !== null && !(current && sameLines(current, input.lines));
  const addonsChanged =
    input.addons !== undefined && input.addons !== null && !(current && sameAddons(current, input.addons));
  const startChanged =
    current &&
    input.dateStart !== undefined &&
    input.dateStart !== null &&
    input.dateStart !== isoDate(current.dateStart);
  if (billed && (addonsChanged || startChanged)) {
    const what = [addonsChanged && "addons", startChanged && "date_start"].filter(Boolean).join(", ");
    throw new InvalidStateError(
      `Cycle ${current!.nextBillingCycle - 1} of subscription ${current!.id} has been billed: ${what} cannot change ` +
        `any more. ` +
        "Lines (plans and quantities) can change with proration (docs/proration.md).",
    );
  }
  return { billed, linesChanged, addonsChanged };
}

/**
 * The proration options (`proration_behavior`, `proration_date` yyyy-mm-dd, `at_period_end`), checked
 * on every update; the options to use when lines are sent after a billed cycle, else null. Field
 * errors: `proration_behavior`, `proration_date`.
 */
function checkProrationOptions({ input, current, errors, billed }: Preparing): Prepared["proration"] {
  let behavior: ProrationBehavior = "create_prorations";
  errors.collect(() => (behavior = prorationBehavior(input.prorationBehavior)));
  if (input.prorationDate != null && !isIsoDate(input.prorationDate))
    errors.add("proration_date", "must be a yyyy-mm-dd date");
  if (input.atPeriodEnd && (input.prorationBehavior != null || input.prorationDate != null)) {
    errors.add(
      input.prorationBehavior != null ? "proration_behavior" : "proration_date",
      "a change at period end is not prorated: send at_period_end or proration options, not both",
    );
  }
  return current && billed && input.lines !== undefined && input.lines !== null
    ? { behavior, requestedDate: input.prorationDate ?? null, atPeriodEnd: input.atPeriodEnd === true }
    : null;
}

/**
 * The customer (found on create, 1 query; fixed once created: on update the stored one, country
 * unknown) and the invoice document type id (chosen per country on create; read and checked to be
 * an invoice type when new, 1 query). Field errors: `customer`, `document`.
 */
async function resolveCustomerAndDocumentType({ ctx, input, current, errors }: Preparing): Promise<{
  customer: { id: string; countryId: string | null } | null;
  documentId: string | null | undefined;
}> {
  let customer: { id: string; countryId: string | null } | null = null;
  if (current) {
    if (input.customer && input.customer !== current.customerId)
      errors.add("customer", "cannot change; cancel this subscription and create one for the other customer");
    customer = { id: current.customerId, countryId: null };
  } else {
    customer = await findDocumentCustomer(ctx, input.customer, errors);
  }
  const documentId = chosenDocumentType("invoice", input.document, current?.documentTypeId, customer?.countryId);
  if (!documentId) {
    if (customer) errors.add("document", "is required (no default invoice type for the customer's country)");
  } else if (!current || documentId !== current.documentTypeId) {
    const documentType = await findDocumentType(ctx, documentId, errors);
    const mismatch = documentType && documentTypeMismatch("invoice", documentType);
    if (mismatch) errors.add("document", mismatch);
  }
  return { customer, documentId };
}

/**
 * Reads the plans of the changed lines, the addons of the changed addons and the coupons named
 * (subscription and lines), each in one query when there is any, in that order; no errors here
 * (unknown ids are reported by the checks that use them).
 */
async function loadCatalogue({ ctx, input, linesChanged, addonsChanged }: Preparing): Promise<Catalogue> {
  const lineInputs = linesChanged ? input.lines! : [];
  const addonInputs = addonsChanged ? input.addons! : [];
  const couponIds = [...new Set([input.coupon, ...lineInputs.map((l) => l.coupon)].filter((c): c is string => !!c))];
  // one after the other: this runs inside a transaction, whose single connection takes one query at a time
  const plans = lineInputs.length
    ? await ctx.prisma.plan.findMany({
        where: { id: { in: lineInputs.map((l) => l.plan).filter((p): p is string => !!p) }, ...tenant(ctx) },
      })
    : ([] as Plan[]);
  const addons = addonInputs.length
    ? await ctx.prisma.addon.findMany({
        where: { id: { in: addonInputs.map((a) => a.addon).filter((a): a is string => !!a) }, ...tenant(ctx) },
      })
    : ([] as Addon[]);
  const coupons = couponIds.length
    ? await ctx.prisma.coupon.findMany({ where: { id: { in: couponIds }, ...tenant(ctx) } })
    : ([] as Coupon[]);
  return {
    lineInputs,
    addonInputs,
    planById: new Map(plans.map((p) => [p.id, p])),
    addons,
    couponById: new Map(coupons.map((c) => [c.id, c])),
  };
}

/**
 * The line rows when the lines change (always on create): at most MAX_SUBSCRIPTION_LINES, plans of
 * the caller, active, of one currency and frequency (after a billed cycle: the subscription's, and
 * metered lines stay), quantities; and the currency and frequency the subscription bills (the new
 * lines', else the stored ones'). `lines` null: keep the stored lines. Field errors: `lines`,
 * `lines.<i>.plan`, `lines.<i>.quantity`.
 */
function checkLines(
  p: Preparing,
  { lineInputs, planById }: Catalogue,
): { lines: Prepared["lines"]; currencyId: string | null; frequency: string | null } {
  const { current, linesChanged, errors } = p;
  if (current && !linesChanged) {
    return {
      lines: null,
      currencyId: current.lines[0]?.plan.currencyId ?? null,
      frequency: current.lines[0]?.plan.frequency ?? null,
    };
  }
  if (lineInputs.length > MAX_SUBSCRIPTION_LINES) errors.add("lines", `at most ${MAX_SUBSCRIPTION_LINES} lines`);
  const linePlans = linePlansOf(errors, lineInputs, planById);
  const first = linePlans.find((plan): plan is Plan => plan !== null);
  if (p.billed && current) checkBilledLinePlans(current, lineInputs, linePlans, errors);
  return {
    lines: lineRowsOf(p, lineInputs, linePlans),
    currencyId: first?.currencyId ?? null,
    frequency: first?.frequency ?? null,
  };
}

/**
 * The plan of each line input (null when missing or unknown), checked together: active, one
 * currency and frequency (domain/subscriptions.ts checkSubscriptionPlans). Field errors:
 * `lines.<i>.plan`.
 */
function linePlansOf(
  errors: FieldErrorCollector,
  lineInputs: SubscriptionLineInput[],
  planById: Map<string, Plan>,
): (Plan | null)[] {
  const linePlans = lineInputs.map((l, i) => {
    if (!l.plan) {
      errors.add(`lines.${i}.plan`, "is required");
      return null;
    }
    const plan = planById.get(l.plan);
    if (!plan) errors.add(`lines.${i}.plan`, `unknown plan ${l.plan}`);
    return plan ?? null;
  });
  checkSubscriptionPlans(
    linePlans.map((p) => (p ? { id: p.id, currencyId: p.currencyId, frequency: p.frequency, status: p.status } : null)),
    errors,
  );
  return linePlans;
}

/**
 * Lines changed mid-subscription: the billed periods fix the currency and frequency; metered lines
 * bill their usage in arrears, so they stay where they are (docs/proration.md). Field errors:
 * `lines.<i>.plan`.
 */
function checkBilledLinePlans(
  current: Current,
  lineInputs: SubscriptionLineInput[],
  linePlans: (Plan | null)[],
  errors: FieldErrorCollector,
): void {
  const was = current.lines[0]?.plan;
  linePlans.forEach((p, i) => {
    if (p && was && p.currencyId !== was.currencyId)
      errors.add(
        `lines.${i}.plan`,
        `plan ${p.id} bills ${p.currencyId}; the subscription bills ${was.currencyId} (cancel it and subscribe ` +
          `again to change currency)`,
      );
    else if (p && was && p.frequency !== was.frequency)
      errors.add(
        `lines.${i}.plan`,
        `plan ${p.id} is ${p.frequency}; the subscription is ${was.frequency} (cancel it and subscribe again to ` +
          `change frequency)`,
      );
  });
  current.lines.forEach((c, i) => {
    if (c.plan.usageScheme === "metered" && lineInputs[i]?.plan !== c.planId) {
      errors.add(
        `lines.${i}.plan`,
        `line ${c.id} is metered (plan ${c.planId}): once a cycle is billed it stays at its position with its ` +
          `plan, so its usage is billed`,
      );
    }
  });
}

/**
 * The line rows, in input order: quantity a decimal more than 0 with at most MAX_AMOUNT_DECIMALS
 * places (1 on a metered plan; default 1), stored as its decimal string; a new `lin_` id, except
 * after a billed cycle, where a position keeps its line's id. Field errors: `lines.<i>.quantity`.
 */
function lineRowsOf(
  { current, errors, billed }: Preparing,
  lineInputs: SubscriptionLineInput[],
  linePlans: (Plan | null)[],
): NonNullable<Prepared["lines"]> {
  return lineInputs.map((l, i) => {
    const plan = linePlans[i];
    let quantity = "1";
    try {
      const q = toDecimal(l.quantity ?? 1);
      if (!q.isFinite()) throw new Error("not finite");
      if (!q.gt(0)) errors.add(`lines.${i}.quantity`, "must be more than 0");
      else if (q.decimalPlaces() > MAX_AMOUNT_DECIMALS)
        errors.add(`lines.${i}.quantity`, `must have at most ${MAX_AMOUNT_DECIMALS} decimal places`);
      else if (plan?.usageScheme === "metered" && !q.eq(1))
        errors.add(
          `lines.${i}.quantity`,
          "must be 1 (or absent) on a metered plan: reported usage decides what is billed",
        );
      quantity = q.toString();
    } catch {
      errors.add(`lines.${i}.quantity`, "must be a decimal number");
    }
    // after a billed cycle a position keeps its line id (usage and history stay attached)
    const id = billed && current?.lines[i] ? current.lines[i].id : newId("lin");
    return { id, position: i, planId: plan?.id ?? "", quantity, couponId: l.coupon || null };
  });
}

/**
 * The subscription's coupon and its redemptions count: a new coupon restarts at 0 redemptions;
 * each coupon attached (to a line or the subscription) is known, active, in the subscription's
 * currency (`$` coupons) and not expired at `ctx.now()`. A kept `$` coupon of another currency than
 * the new lines' is an error too. Field errors: `lines.<i>.coupon`, `coupon`.
 */
function resolveCoupons(
  { ctx, input, current, errors, linesChanged }: Preparing,
  couponById: Map<string, Coupon>,
  lines: Prepared["lines"],
  currencyId: string | null,
): { couponId: string | null; couponRedemptions: number } {
  /** A coupon being attached: known, active, in the subscription's currency ($), not expired. */
  const checkCoupon = (id: string, field: string) => {
    const coupon = couponById.get(id);
    if (!coupon) return errors.add(field, `unknown coupon ${id}`);
    if (coupon.status !== "active") return errors.add(field, `coupon ${id} is ${coupon.status}; attach active coupons`);
    if (coupon.discountScheme === "$" && currencyId && coupon.currencyId !== currencyId) {
      errors.add(field, `coupon ${id} discounts ${coupon.currencyId}; the subscription bills ${currencyId}`);
    }
    errors.collect(() => assertCouponAttachable(couponTerms(coupon), ctx.now(), field));
  };
  lines?.forEach((l, i) => {
    if (l.couponId) checkCoupon(l.couponId, `lines.${i}.coupon`);
  });
  let couponId = current?.couponId ?? null;
  let couponRedemptions = current?.couponRedemptions ?? 0;
  if (input.coupon !== undefined && (input.coupon || null) !== couponId) {
    const next = input.coupon || null;
    if (next) checkCoupon(next, "coupon");
    couponId = next;
    couponRedemptions = 0;
  } else if (
    current?.coupon &&
    linesChanged &&
    current.coupon.discountScheme === "$" &&
    currencyId &&
    current.coupon.currencyId !== currencyId
  ) {
    errors.add(
      "coupon",
      `coupon ${current.coupon.id} discounts ${current.coupon.currencyId}; the new lines bill ${currencyId} (remove ` +
        `or replace the coupon)`,
    );
  }
  return { couponId, couponRedemptions };
}

/**
 * Addons kept while the lines change currency: each must be in the new lines' currency. Field
 * errors: `addons.<i>.addon`.
 */
function checkKeptAddons({ current, errors, linesChanged, addonsChanged }: Preparing, currencyId: string | null): void {
  if (!(current && linesChanged && !addonsChanged && currencyId)) return;
  current.addons.forEach((a, i) => {
    if (a.addon.currencyId !== currencyId)
      errors.add(
        `addons.${i}.addon`,
        `addon ${a.addonId} is in ${a.addon.currencyId}; the new lines bill ${currencyId} (replace the addons too)`,
      );
  });
}

/**
 * The addon rows when the addons change (always on create; null: keep the stored addons): addons of
 * the caller, active, in the subscription's currency; quantity an integer of at least 1 (default
 * 1); `rates` (shares by cycle) only for a one-time addon, checked against its amount in the
 * currency (read once, 1 query when there is a currency). Field errors: `addons.<i>.addon`,
 * `addons.<i>.quantity`, `addons.<i>.rates`, `lines` (unknown currency).
 */
async function checkAddons(
  { current, errors, fields, addonsChanged }: Preparing,
  { addonInputs, addons }: Catalogue,
  currencyId: string | null,
): Promise<Prepared["addons"]> {
  if (!(addonsChanged || !current)) return null;
  const addonById = new Map(addons.map((a) => [a.id, a]));
  const currency = currencyId ? await fields.currency("lines", currencyId, null) : null;
  return addonInputs.map((a, i) => {
    const addon = a.addon ? addonById.get(a.addon) : undefined;
    if (!a.addon) errors.add(`addons.${i}.addon`, "is required");
    else if (!addon) errors.add(`addons.${i}.addon`, `unknown addon ${a.addon}`);
    else {
      if (addon.status !== "active")
        errors.add(`addons.${i}.addon`, `addon ${addon.id} is ${addon.status}; attach active addons`);
      if (currencyId && addon.currencyId !== currencyId)
        errors.add(
          `addons.${i}.addon`,
          `addon ${addon.id} is in ${addon.currencyId}; the subscription bills ${currencyId}`,
        );
    }
    const quantity = a.quantity ?? 1;
    if (!Number.isInteger(quantity) || quantity < 1)
      errors.add(`addons.${i}.quantity`, "must be an integer, at least 1");
    let rates: unknown = addon?.rates ?? [];
    if (addon && a.rates !== undefined && a.rates !== null) {
      if (a.rates.length > 0 && addon.applyScheme !== "one_time")
        errors.add(`addons.${i}.rates`, "split a one-time addon; a recurring addon bills its whole amount every cycle");
      else if (currency)
        errors.collect(
          () => (rates = validateAddonRates(a.rates!, addon.amount.toString(), currency, `addons.${i}.rates`)),
        );
    }
    return { id: newId("lin"), position: i, addonId: addon?.id ?? "", quantity, rates: rates as Prisma.InputJsonValue };
  });
}

/**
 * `date_start` (yyyy-mm-dd; default on create: today in the organization's time zone, or on the
 * customer's test clock: 1 query or 2), `billing_cycles` (a positive integer, at least the cycles
 * billed; null: until cancelled) and `end_date` (the start of cycle billing_cycles + 1 when they
 * are set, else as sent or stored, after `date_start`). Field errors: `billing_cycles`, `end_date`.
 */
async function resolveDates(
  { ctx, input, current, errors }: Preparing,
  customer: { id: string } | null,
  frequency: string | null,
): Promise<{ dateStart: string; endDate: string | null; billingCycles: number | null }> {
  // a customer on a test clock starts on the clock's day (services/test-clocks.ts)
  const today =
    !current && !input.dateStart
      ? await organizationToday(customer ? await customerContext(ctx, customer.id) : ctx)
      : null;
  const dateStart = input.dateStart || (current ? isoDate(current.dateStart) : today!);
  let billingCycles = input.billingCycles !== undefined ? input.billingCycles : (current?.billingCycles ?? null);
  if (billingCycles !== null && (!Number.isInteger(billingCycles) || billingCycles < 1)) {
    errors.add("billing_cycles", "must be a positive integer (or null: until cancelled)");
    billingCycles = null;
  } else if (billingCycles !== null && current && billingCycles < current.nextBillingCycle - 1) {
    errors.add("billing_cycles", `must be at least ${current.nextBillingCycle - 1}: that many cycles have been billed`);
  }
  let endDate: string | null;
  if (billingCycles !== null) {
    endDate = isOneOf(Object.keys(FREQUENCIES) as Frequency[], frequency)
      ? subscriptionEndDate(dateStart, frequency, billingCycles)
      : null;
    if (input.endDate && endDate && input.endDate !== endDate && input.billingCycles !== undefined) {
      errors.add(
        "end_date",
        `is the start of cycle ${billingCycles + 1} (${endDate}) when billing_cycles is set; send one of them`,
      );
    }
  } else {
    endDate =
      input.endDate !== undefined
        ? input.endDate || null
        : input.billingCycles !== undefined
          ? null
          : storedDate(current?.endDate);
    if (endDate && endDate <= dateStart) errors.add("end_date", "must be after date_start");
  }
  return { dateStart, endDate, billingCycles };
}

/**
 * The remaining columns, as sent or stored: `expiration_days` (integer 0..MAX_EXPIRATION_DAYS,
 * default 0), `references` (an array of at most MAX_REFERENCES), `note` (checkNoteLength; "" is
 * null), `metadata` (merged), `tax_settings`. Field errors: those names.
 */
function otherColumns({
  input,
  current,
  errors,
  fields,
}: Preparing): Pick<Prepared["columns"], "expirationDays" | "references" | "note" | "metadata" | "taxSettings"> {
  const expirationDays = input.expirationDays ?? current?.expirationDays ?? 0;
  if (!Number.isInteger(expirationDays) || expirationDays < 0 || expirationDays > MAX_EXPIRATION_DAYS) {
    errors.add("expiration_days", `must be an integer from 0 to ${MAX_EXPIRATION_DAYS}`);
  }
  const references =
    input.references !== undefined ? (input.references ?? []) : ((current?.references ?? []) as unknown[]);
  if (!Array.isArray(references)) errors.add("references", "must be an array");
  else if (references.length > MAX_REFERENCES) errors.add("references", `at most ${MAX_REFERENCES} references`);
  const note = input.note !== undefined ? input.note || null : (current?.note ?? null);
  checkNoteLength(errors, "note", note);
  const metadata = fields.metadata("metadata", input.metadata, current?.metadata);
  const taxSettings = input.taxSettings !== undefined ? (input.taxSettings ?? {}) : (current?.taxSettings ?? {});
  return {
    expirationDays,
    references: references as Prisma.InputJsonValue,
    note,
    metadata,
    taxSettings: taxSettings as Prisma.InputJsonValue,
  };
}

/** Locks the subscription row for the transaction; null when the caller has no such subscription. */
async function lockSubscription(ctx: ServiceContext, id: string): Promise<Current> {
  await lockTenantRow(ctx.prisma, ctx, "Subscription", id);
  // relations loaded one by one: Prisma runs the relations of one include in parallel, which a
  // transaction's single connection would only queue (pg warns about it)
  const subscription = await ctx.prisma.subscription.findFirst({
    where: { id, ...tenant(ctx) },
    include: { coupon: true },
  });
  if (!subscription) throw new NotFoundError("subscription", id);
  const lines = await ctx.prisma.subscriptionLine.findMany({
    where: { subscriptionId: id },
    orderBy: CURRENT_INCLUDE.lines.orderBy,
    include: { plan: true },
  });
  const addons = await ctx.prisma.subscriptionAddon.findMany({
    where: { subscriptionId: id },
    orderBy: CURRENT_INCLUDE.addons.orderBy,
    include: { addon: true },
  });
  return { ...subscription, lines, addons };
}

/** Creates an active subscription. 400 naming every bad field; nothing is written then. */
export async function createSubscription(ctx: ServiceContext, input: SubscriptionInput): Promise<Subscription> {
  return atomically(ctx, async (tx) => {
    const { columns, lines, addons } = await prepare(tx, input, null);
    const created = await tx.prisma.subscription.create({
      data: {
        id: newId("sub"),
        ...tenant(ctx),
        userEmail: ctx.auth.userEmail,
        status: "active",
        nextBillingCycle: 1,
        ...columns,
        lines: { create: lines ?? [] },
        addons: { create: addons ?? [] },
      },
    });
    await recordEvents(tx, "subscription.created", "subscription", [created.id]);
    return created;
  });
}

/**
 * Updates the given fields (metadata merges). `lines`/`addons` replace all of them. Addons and
 * `date_start` change only while no cycle has been billed (409 afterwards, unless sent back
 * unchanged). Lines changed after a billed cycle are prorated (changeLinesMidCycle). Cancelled: 409.
 */
export async function updateSubscription(
  ctx: ServiceContext,
  id: string,
  input: SubscriptionInput,
): Promise<Subscription> {
  return atomically(ctx, async (tx) => {
    const current = await lockSubscription(tx, id);
    subscriptionTransition(current.status, "update");
    return withEvent(tx, id, "subscription.updated", () => applyUpdate(tx, current, input));
  });
}

/** updateSubscription's change of locked subscription `current`, in its transaction `tx`. */
async function applyUpdate(tx: ServiceContext, current: Current, input: SubscriptionInput): Promise<Subscription> {
  const id = current.id;
  const { columns, lines, addons, plans, proration } = await prepare(tx, input, current);
  let pendingChanges: PendingChanges | null | undefined; // undefined: unchanged
  if (proration) {
    if (proration.atPeriodEnd) {
      // scheduled for the renewal; the same lines as now cancel a scheduled change
      pendingChanges = lines
        ? {
            cycle: current.nextBillingCycle,
            requested: tx.now().toISOString(),
            lines: lines.map((l) => ({ id: l.id, plan: l.planId, quantity: l.quantity, coupon: l.couponId })),
          }
        : null;
    } else if (lines) {
      await changeLinesMidCycle(tx, current, lines, plans, proration);
      pendingChanges = null; // a change now replaces one scheduled for the renewal
    }
    // (addons cannot change after a billed cycle: prepare answered 409)
    const data = {
      ...columns,
      ...(pendingChanges === undefined
        ? {}
        : {
            pendingChanges: pendingChanges === null ? DB_NULL : (pendingChanges as unknown as Prisma.InputJsonValue),
          }),
    };
    return tx.prisma.subscription.update({ where: { id }, data });
  }
  if (lines) await tx.prisma.subscriptionLine.deleteMany({ where: { subscriptionId: id } });
  if (addons) await tx.prisma.subscriptionAddon.deleteMany({ where: { subscriptionId: id } });
  return tx.prisma.subscription.update({
    where: { id },
    data: {
      ...columns,
      ...(lines ? { lines: { create: lines } } : {}),
      ...(addons ? { addons: { create: addons } } : {}),
    },
  });
}

/**
 * Runs `change` of locked subscription `id` in `tx` and writes event `type` of it after: for
 * `subscription.updated` with the old values of what changed (no event when nothing did).
 */
async function withEvent(
  tx: ServiceContext,
  id: string,
  type: EventType,
  change: () => Promise<Subscription>,
): Promise<Subscription> {
  const before = type === "subscription.updated" ? await printedObjects(tx, "subscription", [id]) : undefined;
  const changed = await change();
  await recordEvents(tx, type, "subscription", [id], { before });
  return changed;
}

/**
 * Lines replaced after a billed cycle, in the update's transaction: the prorations of the change
 * (domain/proration.ts changeProrations, at list prices, on `proration_date` or today clamped to
 * the current period) are stored as pending items (`create_prorations`), dropped (`none`) or billed
 * now (`always_invoice`, services/proration.ts invoiceProrationsNow); then the lines are written in
 * place (kept positions keep their id; a changed coupon restarts its redemptions).
 */
async function changeLinesMidCycle(
  tx: ServiceContext,
  current: Current,
  lines: NonNullable<Prepared["lines"]>,
  plans: Map<string, Plan>,
  proration: NonNullable<Prepared["proration"]>,
): Promise<void> {
  const first = current.lines[0].plan;
  const currency = await tx.prisma.currency.findUniqueOrThrow({ where: { id: first.currencyId } });
  const priced = (plan: Plan, quantity: DecimalInput): ProratedLine => ({
    plan: plan.id,
    name: plan.name,
    quantity,
    // metered lines bill usage in arrears: nothing to prorate
    periodAmount:
      plan.usageScheme === "metered"
        ? 0
        : priceQuantity(
            { amount: plan.amount.toString(), tiersMode: plan.tiersMode, tiers: plan.tiers as never },
            quantity,
            currency,
          ),
    exempt: plan.exempt,
  });
  const { period, date } = prorationPoint({
    anchor: isoDate(current.dateStart),
    frequency: first.frequency as Frequency,
    nextBillingCycle: current.nextBillingCycle,
    today: await organizationToday(tx),
    requested: proration.requestedDate,
  });
  const items = changeProrations({
    before: current.lines.map((l) => priced(l.plan, l.quantity.toString())),
    after: lines.map((l) => priced(plans.get(l.planId)!, l.quantity)),
    period,
    date,
    currency,
  });
  if (proration.behavior === "create_prorations") await storePendingItems(tx, current.id, items);
  else if (proration.behavior === "always_invoice") await invoiceProrationsNow(tx, current, currency, items);

  const kept = new Set(lines.map((l) => l.id));
  const removed = current.lines.filter((l) => !kept.has(l.id)).map((l) => l.id);
  if (removed.length > 0) await tx.prisma.subscriptionLine.deleteMany({ where: { id: { in: removed } } });
  for (const line of lines) {
    const before = current.lines.find((l) => l.id === line.id);
    if (!before) {
      await tx.prisma.subscriptionLine.create({
        data: { ...line, subscriptionId: current.id, organizationId: current.organizationId },
      });
      continue;
    }
    const sameCoupon = before.couponId === line.couponId;
    await tx.prisma.subscriptionLine.update({
      where: { id: line.id },
      data: {
        position: line.position,
        planId: line.planId,
        quantity: line.quantity,
        couponId: line.couponId,
        ...(sameCoupon ? {} : { couponRedemptions: 0 }),
      },
    });
  }
}

/**
 * Cancels now (status `cancelled`, `cancelled` = now: a test clock's customer's clock time) or, `atPeriodEnd`,
 * at the end of the current period (`cancel_at_period_end` true; status and `cancelled` unchanged until the
 * billing run ends it). `cancel_reason` defaults to `requested_by_customer`. Already cancelled (or already set to
 * cancel at period end, for `atPeriodEnd`): 409. A customer-portal credential may cancel only its
 * own customer's subscriptions (404 for others), only at period end and only when the branding's
 * `portalCancelSubscriptions` is on (403 otherwise; docs/customer-portal.md).
 */
export async function cancelSubscription(
  ctx: ServiceContext,
  id: string,
  options: { reason?: string | null; atPeriodEnd?: boolean | null } = {},
): Promise<Subscription> {
  const reason = normalizeReason(options.reason, "cancel_reason", DEFAULT_CANCEL_REASON);
  return atomically(ctx, async (tx) => {
    const current = await lockSubscription(tx, id);
    checkPortalCustomer(tx, current.customerId, "subscription", id);
    if (tx.auth.portal) {
      if (!options.atPeriodEnd)
        throw new PermissionError("The customer portal cancels subscriptions at period end only");
      if (!(await readSettings(tx.prisma, tenant(tx))).portalCancelSubscriptions)
        throw new PermissionError("This business does not let customers cancel subscriptions in the portal");
    }
    if (options.atPeriodEnd) {
      subscriptionTransition(current.status, "cancel_at_period_end", current.cancelAtPeriodEnd);
      // canceled when the period ends (the billing run writes subscription.canceled then)
      return withEvent(tx, id, "subscription.updated", () =>
        tx.prisma.subscription.update({ where: { id }, data: { cancelAtPeriodEnd: true, cancelReason: reason } }),
      );
    }
    const status: SubscriptionStatus = subscriptionTransition(current.status, "cancel");
    // a test clock's customer is cancelled at its clock's time (docs/test-clocks.md)
    const cancelled = (await customerContext(tx, current.customerId)).now();
    return withEvent(tx, id, "subscription.canceled", () =>
      tx.prisma.subscription.update({ where: { id }, data: { status, cancelled, cancelReason: reason } }),
    );
  });
}

/**
 * Pauses an active subscription (`paused` = now, a test clock's customer's clock time; `paused_reason`); the billing
 * run skips it. 409 unless active.
 */
export async function pauseSubscription(
  ctx: ServiceContext,
  id: string,
  reason?: string | null,
): Promise<Subscription> {
  const pausedReason = normalizeReason(reason, "reason", null);
  return atomically(ctx, async (tx) => {
    const current = await lockSubscription(tx, id);
    const status = subscriptionTransition(current.status, "pause");
    const paused = (await customerContext(tx, current.customerId)).now();
    return withEvent(tx, id, "subscription.paused", () =>
      tx.prisma.subscription.update({ where: { id }, data: { status, paused, pausedReason } }),
    );
  });
}

/** Resumes a paused subscription: back to `active`, `paused` and `paused_reason` cleared. 409 unless paused. */
export async function resumeSubscription(ctx: ServiceContext, id: string): Promise<Subscription> {
  return atomically(ctx, async (tx) => {
    const current = await lockSubscription(tx, id);
    const status = subscriptionTransition(current.status, "resume");
    return withEvent(tx, id, "subscription.resumed", () =>
      tx.prisma.subscription.update({ where: { id }, data: { status, paused: null, pausedReason: null } }),
    );
  });
}
