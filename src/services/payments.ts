/**
 * Payments and sources (spec "Payment", "Payment (status)", "Limits"; docs/payments.md).
 *
 * A payment is created in `requires_payment_method`; a source is attached by authorize. A
 * reusable source (test card) is charged at once; a single-use source (redirect) is paid through
 * the pay operation, which sends the customer to the gateway's checkout, whose answer settles the
 * payment. Status moves: domain/payments.ts.
 *
 * Never charging twice: every charge is a numbered attempt row created in the same transaction
 * that moves the payment to `processing`, under a row lock on the payment (concurrent authorizes
 * queue; the later ones find it processing or succeeded and get a 409), and a partial unique index
 * allows one pending or succeeded attempt per payment. The gateway is then called with the attempt
 * id as idempotency key, outside the transaction, and a second transaction records its answer.
 */
import { collectionPaymentId } from "../domain/billing-cycle.js";
import { movePastDue } from "./past-due.js";
import { createHash } from "node:crypto";
import {
  Prisma,
  type Currency,
  type Payment,
  type PaymentCharge,
  type Source,
} from "../infra/prisma/generated/client.js";
import { directTransaction, insertRows, sqlRows } from "../infra/sql/index.js";
import { derivedId, newId, randomSecret } from "../infra/ids.js";
import { findGateway, type ChargeResult, type PaymentGateway } from "../infra/gateways/index.js";
import { checkoutPath } from "../infra/gateways/redirect.js";
import { FieldErrorCollector, InvalidStateError, NotFoundError, ValidationError } from "../domain/errors.js";
import { isHttpUrl, dateColumn } from "../domain/formats.js";
import { mergeMetadata, type Metadata } from "../domain/metadata.js";
import { Decimal, toDecimal, type DecimalInput } from "../domain/money.js";
import { checkPaymentLimits, forgetsDeclinedSource, paymentTransition } from "../domain/payments.js";
import {
  atomically,
  checkPortalDocument,
  checkPortalInvoices,
  lockTenantRow,
  tenant,
  withinTransaction,
  type ServiceContext,
  type Tx,
} from "./context.js";
import { recordEvents } from "./events.js";
import { readSettings } from "./organization-settings.js";
import { findCurrency, findDocumentCustomer, organizationToday } from "./reference.js";
import { invoiceBalances, lockInvoices, settlingInvoices } from "./invoice-balances.js";

export interface SourceInput {
  customer?: string | null;
  /** gateway name: `test` (card tokens) or `redirect` (hosted checkout) when enabled */
  gateway?: string | null;
  usage?: string | null;
  amount?: DecimalInput | null;
  description?: string | null;
  /** where the checkout sends the customer back (redirect flow) */
  returnUrl?: string | null;
  /** gateway data: `{token}` for the test gateway */
  data?: Record<string, unknown> | null;
  metadata?: Record<string, unknown> | null;
}

export interface PaymentInput {
  /** positive, in `currency`, at most its decimals */
  amount?: DecimalInput | null;
  /** ISO 4217; default: the invoice's, else the customer's currency */
  currency?: string | null;
  /** yyyy-mm-dd, not before today in the organization's time zone; default today */
  date?: string | null;
  description?: string | null;
  customer?: string | null;
  invoice?: string | null;
  metadata?: Record<string, unknown> | null;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The gateway of `name` if it is enabled and usable in the caller's mode; a field error otherwise. */
function gatewayFor(
  ctx: ServiceContext,
  name: string,
  errors: FieldErrorCollector,
  field = "gateway",
): PaymentGateway | null {
  const gateway = findGateway(name, ctx.settings.paymentGateways);
  if (!gateway)
    errors.add(
      field,
      `unknown or disabled gateway ${name}; enabled: ${ctx.settings.paymentGateways.join(", ") || "none"}`,
    );
  else if (gateway.testOnly && !ctx.auth.testMode) errors.add(field, `the ${name} gateway works with test keys only`);
  return gateway && (!gateway.testOnly || ctx.auth.testMode) ? gateway : null;
}

/**
 * Creates a source at a gateway (`chargeable`). Test cards: `{gateway: "test", data: {token:
 * "tok_visa"}}`, reusable. Redirect: `{gateway: "redirect", return_url}`, single use, with
 * `data.redirect_url` leading to the hosted checkout. 400 for an unknown gateway, token or
 * customer, or a gateway used outside test mode.
 */
export async function createSource(ctx: ServiceContext, input: SourceInput): Promise<Source> {
  const errors = new FieldErrorCollector();
  const portal = ctx.auth.portal;
  if (portal) {
    // a portal credential makes sources of its own customer only (docs/customer-portal.md)
    if (input.customer && input.customer !== portal.customerId)
      errors.add("customer", `unknown customer ${input.customer}`);
    input = { ...input, customer: portal.customerId };
  }
  const customer = input.customer ? await findDocumentCustomer(ctx, input.customer, errors) : null;
  let prepared = null;
  if (!input.gateway) errors.add("gateway", "is required");
  else {
    const gateway = gatewayFor(ctx, input.gateway, errors);
    prepared = gateway?.prepareSource({ usage: input.usage, data: input.data ?? {} }, errors) ?? null;
  }
  if (input.amount !== undefined && input.amount !== null && !toDecimal(input.amount).isPositive())
    errors.add("amount", "must be positive");
  if (input.description && input.description.length > 256)
    errors.add("description", "must have at most 256 characters");
  if (input.returnUrl && !isHttpUrl(input.returnUrl)) errors.add("return_url", "must be an http(s) URL");
  let metadata: Metadata = {};
  errors.collect(() => {
    metadata = mergeMetadata({}, input.metadata);
  });
  errors.throwIfAny("Invalid source");

  let checkoutTokenHash: string | null = null;
  const data = { ...prepared!.data };
  if (prepared!.flow === "redirect") {
    const token = `chk_${randomSecret(32)}`;
    checkoutTokenHash = sha256(token);
    data.redirect_url = `${ctx.baseUrl}${checkoutPath(token)}`;
  }
  return ctx.prisma.source.create({
    data: {
      id: newId("sou"),
      ...tenant(ctx),
      customerId: customer?.id ?? null,
      amount: input.amount !== undefined && input.amount !== null ? toDecimal(input.amount).toString() : null,
      description: input.description || null,
      returnUrl: input.returnUrl || null,
      status: "chargeable",
      gateway: input.gateway!,
      usage: prepared!.usage,
      flow: prepared!.flow,
      data: data as Prisma.InputJsonValue,
      metadata,
      checkoutTokenHash,
    },
  });
}

/**
 * Creates a payment in `requires_payment_method`. Limits (spec): amount positive and in the
 * currency's unit, date not before today (organization time zone), description at most 256
 * characters, currency known and chargeable. With an invoice: it is finalized, the currency and
 * customer are the invoice's, and the amount is at most what is due. 400 naming each bad field.
 * `options.id`: the payment's id instead of a random one (the billing run's payment of an invoice,
 * `collectionPaymentId`, so that it can be found again after a crash). The rules are createPayments', for one.
 */
export async function createPayment(
  ctx: ServiceContext,
  input: PaymentInput,
  options: { id?: string } = {},
): Promise<Payment> {
  const [payment] = await createPayments(ctx, [{ input, id: options.id }]);
  return payment;
}

/** A payment to create (createPayments): its input and, optionally, its known id. */
export interface NewPayment {
  input: PaymentInput;
  id?: string;
}

/**
 * createPayment of several payments of the caller's organization and mode, with a few statements whatever their
 * number (the dunning attempts' page): each is checked as createPayment checks one (the first with errors throws
 * them, and nothing is written), then all are inserted with one statement and their `payment.created` events
 * written with one. Returns the payments in input order.
 */
export async function createPayments(ctx: ServiceContext, items: readonly NewPayment[]): Promise<Payment[]> {
  if (items.length === 0) return [];
  const facts = await paymentFacts(ctx, items);
  const payments: Payment[] = [];
  for (const item of items) payments.push(await checkedPayment(ctx, item, facts));
  return atomically(ctx, async (tx) => {
    // one statement of one JSON parameter (infra/sql/insert-rows.ts); the rows are the payments returned, every
    // column given (the timestamps too, as Prisma's @default(now()) and @updatedAt would give them)
    await insertRows(
      tx.prisma,
      "Payment",
      payments.map((p) => ({ ...p, amount: p.amount.toFixed() })),
    );
    await recordEvents(
      tx,
      "payment.created",
      "payment",
      payments.map((p) => p.id),
    );
    return payments;
  });
}

/** What createPayments checks its payments against: today, their invoices, customers and invoices' balances. */
async function paymentFacts(ctx: ServiceContext, items: readonly NewPayment[]) {
  const invoiceIds = [...new Set(items.map((i) => i.input.invoice).filter((id): id is string => !!id))];
  const [today, invoices] = await Promise.all([
    organizationToday(ctx),
    invoiceIds.length
      ? ctx.prisma.invoice.findMany({
          where: { id: { in: invoiceIds }, ...tenant(ctx) },
          // what the checks read (not the snapshots and totals of a whole invoice row)
          select: { id: true, status: true, customerId: true, currencyId: true },
        })
      : [],
  ]);
  const byId = new Map(invoices.map((i) => [i.id, i]));
  const customerIds = [
    ...new Set(items.map((i) => i.input.customer ?? byId.get(i.input.invoice ?? "")?.customerId).filter((c) => !!c)),
  ] as string[];
  const customers = customerIds.length
    ? await ctx.prisma.customer.findMany({
        where: { id: { in: customerIds }, ...tenant(ctx) },
        select: { id: true, currencyId: true },
      })
    : [];
  const finalized = invoices.filter((i) => i.status === "finalized").map((i) => i.id);
  const balances = await invoiceBalances(ctx, finalized);
  return {
    today,
    invoices: byId,
    customers: new Map(customers.map((c) => [c.id, c])),
    due: new Map(finalized.map((id, k) => [id, balances[k].due])),
  };
}

/**
 * Checks one payment of createPayments (the spec's limits; 400 naming each bad field) and returns it as its row will
 * be: every column, created and updated now.
 */
async function checkedPayment(
  ctx: ServiceContext,
  item: NewPayment,
  facts: Awaited<ReturnType<typeof paymentFacts>>,
): Promise<Payment> {
  const { input } = item;
  const errors = new FieldErrorCollector();
  const invoice = input.invoice ? (facts.invoices.get(input.invoice) ?? null) : null;
  if (input.invoice && !invoice) errors.add("invoice", `unknown invoice ${input.invoice}`);
  else if (invoice && invoice.status !== "finalized")
    errors.add("invoice", `${invoice.id} is a ${invoice.status}; only finalized invoices are paid`);

  const customerId = input.customer ?? invoice?.customerId ?? null;
  const customer = customerId ? (facts.customers.get(customerId) ?? null) : null;
  if (customerId && !customer) errors.add("customer", `unknown customer ${customerId}`);
  if (invoice && customer && invoice.customerId !== customer.id)
    errors.add("customer", `invoice ${invoice.id} belongs to customer ${invoice.customerId}`);

  const currencyId = input.currency ?? invoice?.currencyId ?? customer?.currencyId;
  const currency = currencyId ? await findCurrency(ctx, currencyId, errors) : null;
  if (!currencyId) errors.add("currency", "is required (no invoice or customer currency to default to)");
  if (invoice && currency && currency.id !== invoice.currencyId)
    errors.add("currency", `must be the invoice's currency ${invoice.currencyId}`);

  const date = input.date ?? facts.today;
  checkPaymentLimits({ amount: input.amount, date, description: input.description }, currency, facts.today, errors);
  let metadata: Metadata = {};
  errors.collect(() => {
    metadata = mergeMetadata({}, input.metadata);
  });
  if (invoice && invoice.status === "finalized" && errors.empty) {
    const due = facts.due.get(invoice.id)!;
    if (toDecimal(input.amount!).greaterThan(due))
      errors.add("amount", `exceeds what is due on invoice ${invoice.id}: ${due} ${invoice.currencyId}`);
  }
  errors.throwIfAny("Invalid payment");
  const now = new Date();
  return {
    id: item.id ?? newId("pay"),
    ...tenant(ctx),
    customerId: customer?.id ?? null,
    invoiceId: invoice?.id ?? null,
    sourceId: null,
    // the column's scale (numeric(20, 6)) holds what the currency's unit allows (checkPaymentLimits)
    amount: new Prisma.Decimal(toDecimal(input.amount!).toString()),
    currencyId: currency!.id,
    date: dateColumn(date),
    description: input.description || null,
    paymentDate: null,
    status: "requires_payment_method",
    failureReason: null,
    metadata: metadata as Prisma.JsonValue,
    userEmail: ctx.auth.userEmail,
    createdAt: now,
    updatedAt: now,
  };
}

/** Merges `metadata` into a payment's (an empty value removes a key); any status. 404 unknown. */
export async function updatePaymentMetadata(
  ctx: ServiceContext,
  id: string,
  metadata: Record<string, unknown>,
): Promise<Payment> {
  return ctx.prisma.$transaction(async (tx) => {
    const payment = await lockPayment(tx, ctx, id);
    return tx.payment.update({
      where: { id },
      data: { metadata: mergeMetadata(payment.metadata as Metadata, metadata) },
    });
  });
}

/** Locks the payment row (`FOR UPDATE`) for the rest of the transaction and loads it; 404 for another tenant's. */
async function lockPayment(tx: Tx, ctx: ServiceContext, id: string) {
  return (await lockPayments(tx, ctx, [id])).get(id)!;
}

/** A payment locked by lockPayments: with its source and its pending charges. */
type LockedPayment = Payment & { source: Source | null; charges: PaymentCharge[] };

/**
 * Locks the payment rows `ids` (`FOR UPDATE`, in id order, one statement) for the rest of the transaction and loads
 * them with their sources and pending charges, by id; 404 for the first that is another tenant's or unknown.
 */
async function lockPayments(tx: Tx, ctx: ServiceContext, ids: readonly string[]): Promise<Map<string, LockedPayment>> {
  const sorted = [...new Set(ids)].sort();
  const locked = new Set<string>();
  if (sorted.length === 1) {
    if (await lockTenantRow(tx, ctx, "Payment", sorted[0])) locked.add(sorted[0]);
  } else {
    const rows = await sqlRows<{ id: string }>(
      tx,
      Prisma.sql`SELECT "id" FROM "Payment" WHERE "id" = ANY(${sorted}::text[])
      AND "organizationId" = ${ctx.auth.organizationId} AND "testMode" = ${ctx.auth.testMode} ORDER BY "id" FOR UPDATE`,
    );
    for (const r of rows) locked.add(r.id);
  }
  const missing = sorted.find((id) => !locked.has(id));
  if (missing) throw new NotFoundError("payment", missing);
  // loaded one after the other: Prisma runs the relations of one include in parallel, and a
  // transaction's single connection would queue them anyway (pg warns about that)
  const payments = await tx.payment.findMany({ where: { id: { in: sorted } }, include: { source: true } });
  const charges = await tx.paymentCharge.findMany({ where: { paymentId: { in: sorted }, status: "pending" } });
  return new Map(payments.map((p) => [p.id, { ...p, charges: charges.filter((c) => c.paymentId === p.id) }]));
}

/**
 * Cancels a payment that has not succeeded (DELETE): it stays readable with status `canceled`.
 * A redirect charge waiting at the checkout is canceled with it. 409 when it has succeeded, is
 * canceled already, or a card charge is being answered right now; 404 unknown.
 */
export async function cancelPayment(ctx: ServiceContext, id: string): Promise<Payment> {
  return ctx.prisma.$transaction(async (tx) => {
    const payment = await lockPayment(tx, ctx, id);
    const pending = payment.charges[0];
    const next = paymentTransition(payment.status, "cancel", {
      chargeInFlight: !!pending && payment.source?.flow !== "redirect",
    });
    if (pending) await tx.paymentCharge.update({ where: { id: pending.id }, data: { status: "canceled" } });
    const canceled = await tx.payment.update({ where: { id }, data: { status: next } });
    await recordEvents(withinTransaction(ctx, tx), "payment.canceled", "payment", [id]);
    return canceled;
  });
}

/**
 * Checks that each `sourceId` may pay its `payment` (call inside the payments' transaction, with a
 * transaction context): the sources, locked in id order with one statement, and each item's field errors on
 * `source`, in input order. A single-use source pays one payment only (a second item with it gets the error too).
 */
async function usableSources(
  ctx: ServiceContext,
  items: readonly { sourceId: string | null | undefined; payment: Payment }[],
): Promise<{ source: Source | null; errors: FieldErrorCollector }[]> {
  const ids = [...new Set(items.map((i) => i.sourceId).filter((id): id is string => !!id))].sort();
  // locked, so two payments cannot take one single-use source at the same time
  if (ids.length === 1) await lockTenantRow(ctx.prisma, ctx, "Source", ids[0]);
  else if (ids.length > 1)
    await sqlRows(
      ctx.prisma,
      Prisma.sql`SELECT "id" FROM "Source" WHERE "id" = ANY(${ids}::text[])
      AND "organizationId" = ${ctx.auth.organizationId} AND "testMode" = ${ctx.auth.testMode} ORDER BY "id" FOR UPDATE`,
    );
  const sources = ids.length ? await ctx.prisma.source.findMany({ where: { id: { in: ids }, ...tenant(ctx) } }) : [];
  const singleUse = sources.filter((s) => s.usage === "single_use").map((s) => s.id);
  const others = singleUse.length
    ? await ctx.prisma.payment.findMany({
        where: { sourceId: { in: singleUse }, status: { not: "canceled" } },
        select: { id: true, sourceId: true },
      })
    : [];
  const taken = new Map<string, string>();
  return items.map(({ sourceId, payment }) => {
    const errors = new FieldErrorCollector();
    const source = sources.find((s) => s.id === sourceId) ?? null;
    if (!sourceId) errors.add("source", "is required");
    else if (!source) errors.add("source", `unknown source ${sourceId}`);
    if (!source) return { source: null, errors };
    if (source.usage === "single_use") {
      const other = others.find((o) => o.sourceId === source.id && o.id !== payment.id)?.id ?? taken.get(source.id);
      if (other) errors.add("source", `single-use source ${source.id} belongs to payment ${other}`);
      taken.set(source.id, payment.id);
    }
    if (source.customerId && payment.customerId && source.customerId !== payment.customerId) {
      errors.add(
        "source",
        `source ${source.id} belongs to another customer than the payment's (${payment.customerId})`,
      );
    }
    if (source.status !== "chargeable") errors.add("source", `source ${source.id} is ${source.status}, not chargeable`);
    if (source.amount !== null && !source.amount.equals(payment.amount)) {
      errors.add(
        "source",
        `source ${source.id} is for ${source.amount.toFixed()}, the payment is ${payment.amount.toFixed()}`,
      );
    }
    gatewayFor(ctx, source.gateway, errors, "source");
    return { source, errors };
  });
}

/** What a started charge needs after its transaction commits. */
export interface StartedCharge {
  chargeId: string;
  gateway: PaymentGateway;
  source: Source;
}

/**
 * Inside a locked transaction: moves the payment to `processing` and records attempt N+1 as
 * pending. When the payment bills an invoice, the amount must still fit in what is due minus
 * other charges in flight (the invoice row is locked meanwhile). The rules are startCharges', for one.
 */
async function startCharge(tx: Tx, ctx: ServiceContext, payment: Payment, source: Source): Promise<StartedCharge> {
  const [started] = await startCharges(tx, ctx, [{ payment, source }]);
  return started;
}

/**
 * startCharge of several payments (locked by the caller, each once) in a few statements: their invoices locked in id
 * order and their balances read once, each amount checked against what is due minus the charges in flight (those
 * this call starts count as they would one after the other), then the attempts inserted with one statement and
 * the payments moved to `processing` with one. 400 (`amount`) for the first that does not fit; nothing written.
 */
async function startCharges(
  tx: Tx,
  ctx: ServiceContext,
  entries: readonly { payment: Payment; source: Source }[],
): Promise<StartedCharge[]> {
  if (entries.length === 0) return [];
  const next = entries.map((e) => paymentTransition(e.payment.status, "start_charge"));
  const invoiceIds = entries.map((e) => e.payment.invoiceId).filter((id): id is string => !!id);
  if (invoiceIds.length) {
    const txCtx = withinTransaction(ctx, tx);
    await lockInvoices(txCtx, invoiceIds);
    const balances = await invoiceBalances(txCtx, invoiceIds);
    const room = new Map(invoiceIds.map((id, k) => [id, new Decimal(balances[k].due).minus(balances[k].inFlight)]));
    for (const { payment } of entries) {
      if (!payment.invoiceId) continue;
      const left = room.get(payment.invoiceId)!;
      if (payment.amount.greaterThan(left)) {
        throw ValidationError.field(
          "amount",
          `exceeds what is due on invoice ${payment.invoiceId}: ` +
            `${Decimal.max(left, 0).toFixed()} ${payment.currencyId}`,
        );
      }
      room.set(payment.invoiceId, left.minus(payment.amount));
    }
  }
  const last = await sqlRows<{ paymentId: string; attempt: number }>(
    tx,
    Prisma.sql`SELECT "paymentId", MAX("attempt") AS "attempt" FROM "PaymentCharge"
    WHERE "paymentId" = ANY(${entries.map((e) => e.payment.id)}::text[]) GROUP BY "paymentId"`,
  );
  const lastOf = new Map(last.map((l) => [l.paymentId, l.attempt]));
  const now = new Date();
  const charges = entries.map(({ payment, source }) => {
    const attempt = (lastOf.get(payment.id) ?? 0) + 1;
    return {
      // derived from (payment, attempt): when a keyed request rolls back after the gateway call
      // (a crash, a 5xx), its retry writes attempt N again with the same id and the gateway,
      // idempotent per id, answers the first call's result instead of charging twice
      id: derivedId("chg", `${payment.id}/${attempt}`),
      paymentId: payment.id,
      organizationId: payment.organizationId,
      attempt,
      sourceId: source.id,
      gateway: source.gateway,
      amount: payment.amount.toFixed(),
      currencyId: payment.currencyId,
      status: "pending",
      createdAt: now,
      updatedAt: now,
    };
  });
  await insertRows(tx, "PaymentCharge", charges);
  await sqlRows(
    tx,
    Prisma.sql`UPDATE "Payment" p SET "status" = v."status", "sourceId" = v."sourceId", "failureReason" = NULL,
      "updatedAt" = ${new Date()}::timestamptz
    FROM unnest(${entries.map((e) => e.payment.id)}::text[], ${next}::text[],
      ${entries.map((e) => e.source.id)}::text[])
      AS v("id", "status", "sourceId")
    WHERE p."id" = ANY(${entries.map((e) => e.payment.id)}::text[]) AND p."id" = v."id"`,
  );
  return entries.map(({ source }, k) => ({
    chargeId: charges[k].id,
    gateway: findGateway(source.gateway, ctx.settings.paymentGateways)!,
    source,
  }));
}

/** How a charge started by payInvoice is recorded. */
interface ChargeOptions {
  /**
   * A reusable source whose first charge this is and which is declined is removed from its customer in the
   * transaction that records the decline: detached (no customer, not the default) and `failed`, so a card that never
   * worked is not kept (payInvoice, the customer portal's "new card"; docs/payments.md "A declined new card").
   */
  forgetNewCardOnDecline?: boolean;
}

/**
 * Records a gateway's answer to a pending charge: succeeded, or back to requires_payment_method with the reason (and,
 * with `forgetNewCardOnDecline`, a new card whose first charge declined removed from its customer). The rules are
 * settleCharges', for one; 409 when the charge was answered or canceled meanwhile.
 */
async function settleCharge(
  ctx: ServiceContext,
  paymentId: string,
  chargeId: string,
  result: ChargeResult,
  options: ChargeOptions = {},
): Promise<Payment> {
  const [settled] = await settleCharges(ctx, [{ paymentId, chargeId, result }], options);
  if (settled instanceof Error) throw settled;
  return settled;
}

/** A gateway's answer to a pending charge of a payment, to record (settleCharges). */
export interface ChargeAnswer {
  paymentId: string;
  chargeId: string;
  result: ChargeResult;
}

/**
 * Records the gateway's answers to pending charges of payments of the caller's organization and mode (each payment
 * once) in one transaction and a few statements whatever their number: the payments and their invoices locked, the
 * charges and payments updated with one statement each, and one statement per kind of event (`payment.succeeded`,
 * `invoice.paid`, `payment.failed`, `invoice.payment_failed`), with the past-due moves of services/past-due.ts.
 * Returns each payment as settled, in input order, or an InvalidStateError (409) for one whose charge was answered
 * or canceled meanwhile (a second checkout answer, a DELETE): nothing is written for it.
 */
export async function settleCharges(
  ctx: ServiceContext,
  answers: readonly ChargeAnswer[],
  options: ChargeOptions = {},
): Promise<(Payment | InvalidStateError)[]> {
  if (answers.length === 0) return [];
  return directTransaction(ctx.prisma, async (tx) => {
    const txCtx = withinTransaction(ctx, tx);
    const payments = await lockPayments(
      tx,
      ctx,
      answers.map((a) => a.paymentId),
    );
    // answered, or canceled, since the charge started (a second checkout answer, a DELETE)
    const valid = answers.filter((a) => payments.get(a.paymentId)!.charges.some((c) => c.id === a.chargeId));
    // the invoices' balances before the answers: invoice.paid for those these payments leave with nothing due
    const invoiceOf = (a: ChargeAnswer) => payments.get(a.paymentId)!.invoiceId;
    if (valid.length === 0) return answers.map((a) => answeredMeanwhile(a));
    const settling = await settlingInvoices(
      txCtx,
      valid.map(invoiceOf).filter((id): id is string => !!id),
    );
    await recordAnswers(tx, valid);
    for (const a of valid) await settleSource(tx, payments.get(a.paymentId)!, a, options);
    await settlePayments(tx, ctx.now(), valid, payments);
    await recordSettlementEvents(txCtx, valid, invoiceOf, settling);
    const settled = await tx.payment.findMany({ where: { id: { in: valid.map((a) => a.paymentId) } } });
    return answers.map((a) => settled.find((p) => valid.includes(a) && p.id === a.paymentId) ?? answeredMeanwhile(a));
  });
}

/** The 409 of an answer whose charge was answered or canceled since it started. */
const answeredMeanwhile = (a: ChargeAnswer) =>
  new InvalidStateError(`Payment ${a.paymentId} was answered or canceled meanwhile`);

/**
 * Moves the answered payments (one statement): succeeded (paid at `now`), or back to requires_payment_method with the
 * decline as their failure reason (domain/payments.ts paymentTransition).
 */
async function settlePayments(
  tx: Tx,
  now: Date,
  answers: readonly ChargeAnswer[],
  payments: Map<string, LockedPayment>,
): Promise<void> {
  const next = answers.map((a) =>
    paymentTransition(payments.get(a.paymentId)!.status, succeeded(a) ? "succeed" : "decline"),
  );
  const reasons = answers.map((a) =>
    a.result.status === "declined" ? `${a.result.failureCode}: ${a.result.failureMessage}` : null,
  );
  await sqlRows(
    tx,
    Prisma.sql`UPDATE "Payment" p SET "status" = v."status", "failureReason" = v."reason",
      "paymentDate" = CASE WHEN v."succeeded" THEN ${now}::timestamptz ELSE p."paymentDate" END,
      "updatedAt" = ${new Date()}::timestamptz
    FROM unnest(${answers.map((a) => a.paymentId)}::text[], ${next}::text[], ${reasons}::text[],
      ${answers.map(succeeded)}::boolean[]) AS v("id", "status", "reason", "succeeded")
    WHERE p."id" = ANY(${answers.map((a) => a.paymentId)}::text[]) AND p."id" = v."id"`,
  );
}

/** Whether a gateway answered that the charge succeeded. */
const succeeded = (a: ChargeAnswer) => a.result.status === "succeeded";

/** Writes the gateway's answers on their charge rows, one statement. */
async function recordAnswers(tx: Tx, answers: readonly ChargeAnswer[]): Promise<void> {
  if (answers.length === 0) return;
  const declined = (a: ChargeAnswer, key: "failureCode" | "failureMessage") =>
    a.result.status === "declined" ? a.result[key] : null;
  await sqlRows(
    tx,
    Prisma.sql`UPDATE "PaymentCharge" c SET "status" = v."status", "reference" = v."reference",
      "failureCode" = COALESCE(v."failureCode", c."failureCode"),
      "failureMessage" = COALESCE(v."failureMessage", c."failureMessage"), "updatedAt" = ${new Date()}::timestamptz
    FROM unnest(${answers.map((a) => a.chargeId)}::text[], ${answers.map((a) => a.result.status)}::text[],
      ${answers.map((a) => a.result.reference)}::text[], ${answers.map((a) => declined(a, "failureCode"))}::text[],
      ${answers.map((a) => declined(a, "failureMessage"))}::text[])
      AS v("id", "status", "reference", "failureCode", "failureMessage")
    WHERE c."id" = ANY(${answers.map((a) => a.chargeId)}::text[]) AND c."id" = v."id"`,
  );
}

/**
 * What an answer does to the payment's source: a single-use source is consumed (succeeded) or failed; with
 * `forgetNewCardOnDecline`, a reusable source whose first charge this is and which declined is removed from its
 * customer (domain/payments.ts forgetsDeclinedSource).
 */
async function settleSource(tx: Tx, payment: LockedPayment, answer: ChargeAnswer, options: ChargeOptions) {
  const source = payment.source;
  if (source?.usage === "single_use") {
    await tx.source.update({
      where: { id: source.id },
      data: { status: succeeded(answer) ? "consumed" : "failed" },
    });
  } else if (
    source &&
    !succeeded(answer) &&
    options.forgetNewCardOnDecline &&
    forgetsDeclinedSource(
      {
        ...source,
        earlierCharges: await tx.paymentCharge.count({ where: { sourceId: source.id, id: { not: answer.chargeId } } }),
      },
      options.forgetNewCardOnDecline,
    )
  ) {
    // a new card whose first charge declined is not kept (as a card whose set-up failed is not attached)
    await tx.customer.updateMany({
      where: { id: source.customerId!, defaultSourceId: source.id },
      data: { defaultSourceId: null },
    });
    await tx.source.update({ where: { id: source.id }, data: { customerId: null, status: "failed" } });
  }
}

/**
 * The events of settled answers: `payment.succeeded` and, for invoices left with nothing due, `invoice.paid`;
 * `payment.failed` and `invoice.payment_failed`; the billing run's declined renewal charges (their payment's known
 * id) make their subscriptions past due when the invoice is its latest cycle's (docs/dunning.md "Past-due
 * subscriptions").
 */
async function recordSettlementEvents(
  txCtx: ServiceContext,
  answers: readonly ChargeAnswer[],
  invoiceOf: (a: ChargeAnswer) => string | null,
  settling: { recordPaid(ids: readonly string[]): Promise<void> },
): Promise<void> {
  const paid = answers.filter(succeeded);
  const declined = answers.filter((a) => !succeeded(a));
  const invoices = (list: readonly ChargeAnswer[]) => list.map(invoiceOf).filter((id): id is string => !!id);
  await recordEvents(
    txCtx,
    "payment.succeeded",
    "payment",
    paid.map((a) => a.paymentId),
  );
  await settling.recordPaid(invoices(paid));
  await recordEvents(
    txCtx,
    "payment.failed",
    "payment",
    declined.map((a) => a.paymentId),
  );
  await recordEvents(txCtx, "invoice.payment_failed", "invoice", invoices(declined));
  const renewals = declined.filter((a) => invoiceOf(a) && a.paymentId === collectionPaymentId(invoiceOf(a)!));
  await movePastDue(txCtx, invoices(renewals), true);
}

/** Charges a started reusable charge at its gateway and records the answer. */
async function chargeNow(
  ctx: ServiceContext,
  payment: Payment,
  started: StartedCharge,
  options: ChargeOptions = {},
): Promise<Payment> {
  const [charged] = await finishCharges(ctx, [{ payment, started }], options);
  if (charged instanceof Error) throw charged;
  return charged;
}

/**
 * Attaches `sourceId` to a payment (spec: POST .../authorize/). A reusable source is charged at
 * once: the payment ends `succeeded`, or back in `requires_payment_method` with the decline
 * reason. A single-use source is only attached; the pay operation then sends the customer to its
 * checkout. 404 unknown payment; 409 when the payment is not awaiting a payment method; 400 for
 * an unknown, consumed or foreign source. Called concurrently, it charges once.
 */
export async function authorizePayment(
  ctx: ServiceContext,
  id: string,
  sourceId: string | null | undefined,
  options: ChargeOptions = {},
): Promise<Payment> {
  const pending = await ctx.prisma.$transaction((tx) => authorizeLocked(withinTransaction(ctx, tx), id, sourceId));
  if (!pending) return ctx.prisma.payment.findUniqueOrThrow({ where: { id } });
  return finishCharge(ctx, pending, options);
}

/** A reusable charge started in a transaction, its gateway call to be made once that transaction commits. */
export interface PendingCharge {
  payment: Payment;
  started: StartedCharge;
}

/**
 * Authorize's first half, inside the caller's transaction (`txCtx` from withinTransaction): locks
 * the payment, checks the source, and either attaches a single-use source (null) or moves the
 * payment to `processing` with attempt N+1 pending (the charge to finish with finishCharge after
 * the transaction commits). Errors as authorizePayment's. The rules are authorizeManyLocked's, for one.
 */
export async function authorizeLocked(
  txCtx: ServiceContext,
  id: string,
  sourceId: string | null | undefined,
): Promise<PendingCharge | null> {
  const [pending] = await authorizeManyLocked(txCtx, [{ id, sourceId }]);
  return pending;
}

/**
 * authorizeLocked of several payments (each once) in a few statements whatever their number (the dunning attempts'
 * page): the payments and sources locked in id order, each checked as authorizeLocked checks one (the first with
 * errors throws them), single-use sources attached (null), and the reusable ones' charges started together
 * (startCharges). Returns the pending charges in input order.
 */
export async function authorizeManyLocked(
  txCtx: ServiceContext,
  items: readonly { id: string; sourceId: string | null | undefined }[],
): Promise<(PendingCharge | null)[]> {
  if (items.length === 0) return [];
  const tx = txCtx.prisma as unknown as Tx;
  const payments = await lockPayments(
    tx,
    txCtx,
    items.map((i) => i.id),
  );
  const checked = await usableSources(
    txCtx,
    items.map((i) => ({ sourceId: i.sourceId, payment: payments.get(i.id)! })),
  );
  for (const { errors } of checked) errors.throwIfAny("Cannot authorize the payment");
  const reusable: { payment: Payment; source: Source; k: number }[] = [];
  for (const [k, { id }] of items.entries()) {
    const payment = payments.get(id)!;
    const source = checked[k].source!;
    if (source.usage === "reusable") reusable.push({ payment, source, k });
    else {
      const next = paymentTransition(payment.status, "attach_source");
      await tx.payment.update({ where: { id }, data: { status: next, sourceId: source.id } });
    }
  }
  const started = await startCharges(tx, txCtx, reusable);
  const pending: (PendingCharge | null)[] = items.map(() => null);
  reusable.forEach(({ payment, k }, n) => (pending[k] = { payment, started: started[n] }));
  return pending;
}

/**
 * Authorize's second half, outside any transaction: asks the gateway to charge the pending
 * attempt (its id the idempotency key) and records the answer. Returns the payment as settled.
 */
export function finishCharge(
  ctx: ServiceContext,
  pending: PendingCharge,
  options: ChargeOptions = {},
): Promise<Payment> {
  return chargeNow(ctx, pending.payment, pending.started, options);
}

/** Gateway calls finishCharges makes at once. */
export const GATEWAY_CALLS_AT_ONCE = 8;

/**
 * finishCharge of several pending charges of the caller's organization and mode, outside any transaction: the
 * gateway is asked to charge each (its attempt id the idempotency key), GATEWAY_CALLS_AT_ONCE at a time, and the
 * answers are recorded together (settleCharges, one transaction). Returns, in input order, each payment as settled,
 * or the error of its gateway call (its charge stays pending, to be asked again with the same id) or of its
 * settlement (InvalidStateError: answered or canceled meanwhile).
 */
export async function finishCharges(
  ctx: ServiceContext,
  pending: readonly PendingCharge[],
  options: ChargeOptions = {},
): Promise<(Payment | Error)[]> {
  const results = await inLanes(pending, GATEWAY_CALLS_AT_ONCE, ({ payment, started }) =>
    started.gateway.charge!({
      chargeId: started.chargeId,
      amount: payment.amount.toFixed(),
      currency: payment.currencyId,
      description: payment.description,
      source: { id: started.source.id, data: started.source.data as Record<string, unknown> },
    }),
  );
  const answered = pending.filter((_, k) => !(results[k] instanceof Error));
  const settled = await settleCharges(
    ctx,
    answered.map((p) => ({
      paymentId: p.payment.id,
      chargeId: p.started.chargeId,
      result: results[pending.indexOf(p)] as ChargeResult,
    })),
    options,
  );
  return results.map((r, k) => (r instanceof Error ? r : settled[answered.indexOf(pending[k])]));
}

/** `fn` of each item, at most `lanes` at a time; each result in input order, or the error it threw. */
async function inLanes<T, R>(items: readonly T[], lanes: number, fn: (item: T) => Promise<R>): Promise<(R | Error)[]> {
  const results: (R | Error)[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const k = next++;
      try {
        results[k] = await fn(items[k]);
      } catch (e) {
        results[k] = e instanceof Error ? e : new Error(String(e));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
  return results;
}

/**
 * Finishes a reusable charge attempt that was started and never answered because its process
 * stopped (docs/billing-run.md "A process that dies while collecting"): when attempt `chargeId` is
 * still `pending` and was last touched at or before `staleBefore` (wall clock), it is claimed by
 * moving its `updatedAt` to now in one update conditional on the value read (a concurrent
 * caller's update then matches no row, and the next claim waits for the new value to go stale),
 * the gateway is asked again with the same attempt id (idempotent: a charge it made before is
 * answered, not made again) and the answer recorded. Null when the attempt is not stale, not
 * pending, claimed by another caller, answered meanwhile, or not a reusable charge of the caller's
 * organization and mode.
 */
export async function resumeStaleCharge(
  ctx: ServiceContext,
  chargeId: string,
  staleBefore: Date,
): Promise<Payment | null> {
  const seen = await ctx.prisma.paymentCharge.findFirst({
    where: {
      id: chargeId,
      status: "pending",
      updatedAt: { lte: staleBefore },
      payment: { ...tenant(ctx), status: "processing" },
    },
    select: { updatedAt: true },
  });
  if (!seen) return null;
  // compare-and-set on the time read: of concurrent callers, the first to update wins, the others match no row
  const claimed = await ctx.prisma.paymentCharge.updateMany({
    where: { id: chargeId, status: "pending", updatedAt: seen.updatedAt },
    data: { updatedAt: new Date(Math.max(Date.now(), seen.updatedAt.getTime() + 1)) },
  });
  if (claimed.count !== 1) return null;
  const charge = await ctx.prisma.paymentCharge.findUniqueOrThrow({
    where: { id: chargeId },
    include: { payment: true, source: true },
  });
  const gateway = findGateway(charge.gateway, ctx.settings.paymentGateways);
  if (!charge.source || charge.source.usage !== "reusable" || !gateway?.charge) return null;
  try {
    return await chargeNow(ctx, charge.payment, { chargeId, gateway, source: charge.source });
  } catch (e) {
    // the first process came back and recorded the answer first: nothing more to do
    if (e instanceof InvalidStateError) return null;
    throw e;
  }
}

/**
 * The pay operation (spec: GET .../pay/). With a single-use (redirect) source: moves the payment to
 * `processing` and returns the checkout address to send the customer to (called again while the
 * customer is there, it returns the same address). With a reusable source: charges it now, as
 * authorize does; when an earlier attempt got no answer from the gateway, it asks again with the
 * same attempt (idempotency key). 409 without a source, or when succeeded or canceled.
 */
export async function payPayment(
  ctx: ServiceContext,
  id: string,
): Promise<{ payment: Payment; redirectUrl: string | null }> {
  const outcome = await ctx.prisma.$transaction(async (tx) => {
    const payment = await lockPayment(tx, ctx, id);
    const source = payment.source;
    if (!source) throw new InvalidStateError(`Payment ${id} has no source; attach one with authorize first`);
    if (source.flow === "redirect") {
      const redirectUrl = String((source.data as Record<string, unknown>).redirect_url);
      if (payment.status === "processing" && payment.charges.length > 0) return { redirectUrl, started: null };
      if (payment.status === "requires_payment_method" && source.status !== "chargeable") {
        throw ValidationError.field(
          "source",
          `source ${source.id} is ${source.status}; authorize the payment with a new source`,
        );
      }
      await startCharge(tx, withinTransaction(ctx, tx), payment, source);
      return { redirectUrl, started: null };
    }
    const gateway = findGateway(source.gateway, ctx.settings.paymentGateways);
    const pending = payment.charges[0];
    if (payment.status === "processing" && pending && gateway) {
      // the gateway did not answer this attempt (network failure): ask again with the same
      // idempotency key, so it is charged at most once
      return { redirectUrl: null, started: { payment, started: { chargeId: pending.id, gateway, source } } };
    }
    if (source.status !== "chargeable")
      throw ValidationError.field("source", `source ${source.id} is ${source.status}, not chargeable`);
    return {
      redirectUrl: null,
      started: { payment, started: await startCharge(tx, withinTransaction(ctx, tx), payment, source) },
    };
  });
  const payment = outcome.started
    ? await chargeNow(ctx, outcome.started.payment, outcome.started.started)
    : await ctx.prisma.payment.findUniqueOrThrow({ where: { id } });
  return { payment, redirectUrl: outcome.redirectUrl };
}

/** What the hosted checkout shows: the payment waiting at a redirect source, and where to return. */
export interface Checkout {
  organizationName: string;
  source: Source;
  payment: Payment | null;
  /** the waiting payment's currency (its code and decimals, for the amount shown), null without a payment */
  currency: Currency | null;
}

/** The checkout of `token` (no API key: the token is the secret), or null when unknown. */
export async function findCheckout(prisma: ServiceContext["prisma"], token: string): Promise<Checkout | null> {
  const source = await prisma.source.findUnique({
    where: { checkoutTokenHash: sha256(token) },
    include: { organization: true },
  });
  if (!source) return null;
  const payment = await prisma.payment.findFirst({ where: { sourceId: source.id }, orderBy: { updatedAt: "desc" } });
  const { organization, ...rest } = source;
  // the source's mode's settings: a test key's branding never shows on a live checkout
  const settings = await readSettings(prisma, { organizationId: source.organizationId, testMode: source.testMode });
  return {
    organizationName: settings.businessName ?? settings.taxBusinessName ?? organization.name,
    source: rest,
    payment,
    currency: payment ? await prisma.currency.findUnique({ where: { id: payment.currencyId } }) : null,
  };
}

/**
 * The customer's answer at the hosted checkout of `token`: `approve` settles the waiting payment as
 * succeeded, `reject` declines it (`rejected_by_customer`). 404 for an unknown token; 409 when no
 * payment waits at this checkout (not paid yet, answered already, or canceled).
 */
export async function completeCheckout(
  base: Omit<ServiceContext, "auth">,
  token: string,
  decision: "approve" | "reject",
): Promise<{ payment: Payment; source: Source }> {
  const source = await base.prisma.source.findUnique({ where: { checkoutTokenHash: sha256(token) } });
  if (!source) throw new NotFoundError("checkout", token.slice(0, 8));
  const ctx: ServiceContext = {
    ...base,
    auth: { organizationId: source.organizationId, testMode: source.testMode, userEmail: "checkout", apiKeyId: "" },
  };
  const waiting = await ctx.prisma.paymentCharge.findFirst({ where: { sourceId: source.id, status: "pending" } });
  if (!waiting)
    throw new InvalidStateError(
      "No payment is waiting at this checkout: it was answered already, canceled, or not paid yet",
    );
  const result: ChargeResult =
    decision === "approve"
      ? { status: "succeeded", reference: `redirect_${waiting.id}` }
      : {
          status: "declined",
          reference: `redirect_${waiting.id}`,
          failureCode: "rejected_by_customer",
          failureMessage: "The customer rejected the payment at the checkout.",
        };
  return { payment: await settleCharge(ctx, waiting.paymentId, waiting.id, result), source };
}

export interface PayInvoiceInput {
  /** `inv_` id of a finalized invoice with an amount due */
  invoice?: string | null;
  /** `sou_` id of a chargeable source of the invoice's customer */
  source?: string | null;
}

/**
 * Pays what is due on an invoice with a source (the customer portal's "Pay", docs/customer-portal.md;
 * any API key may call it too): a payment for the whole amount due in the invoice's currency
 * (reusing the invoice's newest payment still waiting for a payment method with that amount, so
 * a retry after a decline adds no payment), authorized with the source. A reusable source is
 * charged at once (the payment ends succeeded, or requires_payment_method with failureReason); a
 * single-use (redirect) source answers the checkout address to send the customer to. The payment
 * is created in one transaction with the invoice row locked, then charged as authorizePayment
 * does (at most once). A reusable source whose first charge this is and is declined is detached
 * from its customer and `failed` in the transaction that records the decline (a new card that
 * never worked is not kept). Errors: validation_error (invoice or source missing; source unknown,
 * of another customer or not chargeable), not_found (invoice unknown; for a portal credential also another
 * customer's, or a draft), permission_denied (a portal credential whose session hides invoices),
 * invalid_state (a draft invoice, nothing due, or a payment of it under way).
 */
export async function payInvoice(
  ctx: ServiceContext,
  input: PayInvoiceInput,
): Promise<{ payment: Payment; redirectUrl: string | null }> {
  const errors = new FieldErrorCollector();
  if (!input.invoice) errors.add("invoice", "is required");
  if (!input.source) errors.add("source", "is required");
  errors.throwIfAny("Cannot pay the invoice");
  const invoiceId = input.invoice!;
  const sourceId = input.source!;
  const payment = await atomically(ctx, async (tx) => {
    const invoice = await lockTenantRow(tx.prisma, tx, "Invoice", invoiceId, ["id", "customerId", "status", "number"]);
    if (!invoice) throw new NotFoundError("invoice", invoiceId);
    // another customer's invoice, and a draft, are unknown to a portal credential (docs/customer-portal.md)
    checkPortalDocument(
      tx,
      { customerId: invoice.customerId as string, status: invoice.status as string },
      "invoice",
      invoiceId,
    );
    // a session that hides invoices does not let its customer pay them either (docs/customer-portal.md)
    checkPortalInvoices(tx);
    const source = await tx.prisma.source.findFirst({
      where: { id: sourceId, ...tenant(tx) },
      select: { customerId: true },
    });
    if (!source || (tx.auth.portal && source.customerId !== tx.auth.portal.customerId))
      throw ValidationError.field("source", `unknown source ${sourceId}`);
    if (invoice.status !== "finalized")
      throw new InvalidStateError(
        `Invoice ${invoiceId} is a ${String(invoice.status)}; only finalized invoices are paid`,
      );
    if (await tx.prisma.payment.findFirst({ where: { invoiceId, status: "processing" }, select: { id: true } }))
      throw new InvalidStateError(`A payment of invoice ${invoiceId} is under way; wait for its answer`);
    const [balance] = await invoiceBalances(tx, [invoiceId]);
    if (!toDecimal(balance.due).greaterThan(0)) throw new InvalidStateError(`Invoice ${invoiceId} has nothing due`);
    const waiting = await tx.prisma.payment.findFirst({
      where: { invoiceId, status: "requires_payment_method", amount: toDecimal(balance.due).toString() },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    });
    return (
      waiting ??
      createPayment(tx, {
        invoice: invoiceId,
        amount: balance.due,
        description: invoice.number ? `Invoice ${String(invoice.number)}` : null,
      })
    );
  });
  const authorized = await authorizePayment(ctx, payment.id, sourceId, { forgetNewCardOnDecline: true });
  const source = await ctx.prisma.source.findUniqueOrThrow({ where: { id: sourceId }, select: { usage: true } });
  return source.usage === "single_use" ? payPayment(ctx, payment.id) : { payment: authorized, redirectUrl: null };
}
