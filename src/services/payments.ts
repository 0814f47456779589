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
import type { Currency, Payment, Prisma, Source } from "../infra/prisma/generated/client.js";
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
import { invoiceBalances, settlingInvoice } from "./invoice-balances.js";

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
 * `collectionPaymentId`, so that it can be found again after a crash).
 */
export async function createPayment(
  ctx: ServiceContext,
  input: PaymentInput,
  options: { id?: string } = {},
): Promise<Payment> {
  const errors = new FieldErrorCollector();
  const [today, invoice] = await Promise.all([
    organizationToday(ctx),
    input.invoice ? ctx.prisma.invoice.findFirst({ where: { id: input.invoice, ...tenant(ctx) } }) : null,
  ]);
  if (input.invoice && !invoice) errors.add("invoice", `unknown invoice ${input.invoice}`);
  else if (invoice && invoice.status !== "finalized")
    errors.add("invoice", `${invoice.id} is a ${invoice.status}; only finalized invoices are paid`);

  const customerId = input.customer ?? invoice?.customerId ?? null;
  const customer = customerId ? await findDocumentCustomer(ctx, customerId, errors) : null;
  if (invoice && customer && invoice.customerId !== customer.id)
    errors.add("customer", `invoice ${invoice.id} belongs to customer ${invoice.customerId}`);

  const currencyId = input.currency ?? invoice?.currencyId ?? customer?.currencyId;
  const currency = currencyId ? await findCurrency(ctx, currencyId, errors) : null;
  if (!currencyId) errors.add("currency", "is required (no invoice or customer currency to default to)");
  if (invoice && currency && currency.id !== invoice.currencyId)
    errors.add("currency", `must be the invoice's currency ${invoice.currencyId}`);

  const date = input.date ?? today;
  checkPaymentLimits({ amount: input.amount, date, description: input.description }, currency, today, errors);
  let metadata: Metadata = {};
  errors.collect(() => {
    metadata = mergeMetadata({}, input.metadata);
  });
  if (invoice && invoice.status === "finalized" && errors.empty) {
    const [balance] = await invoiceBalances(ctx, [invoice.id]);
    if (toDecimal(input.amount!).greaterThan(balance.due)) {
      errors.add("amount", `exceeds what is due on invoice ${invoice.id}: ${balance.due} ${invoice.currencyId}`);
    }
  }
  errors.throwIfAny("Invalid payment");
  return atomically(ctx, async (tx) => {
    const payment = await tx.prisma.payment.create({
      data: {
        id: options.id ?? newId("pay"),
        ...tenant(ctx),
        customerId: customer?.id ?? null,
        invoiceId: invoice?.id ?? null,
        amount: toDecimal(input.amount!).toString(),
        currencyId: currency!.id,
        date: dateColumn(date),
        description: input.description || null,
        status: "requires_payment_method",
        metadata,
        userEmail: ctx.auth.userEmail,
      },
    });
    await recordEvents(tx, "payment.created", "payment", [payment.id]);
    return payment;
  });
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
  if (!(await lockTenantRow(tx, ctx, "Payment", id))) throw new NotFoundError("payment", id);
  // loaded one after the other: Prisma runs the relations of one include in parallel, and a
  // transaction's single connection would queue them anyway (pg warns about that)
  const payment = await tx.payment.findUniqueOrThrow({ where: { id }, include: { source: true } });
  const charges = await tx.paymentCharge.findMany({ where: { paymentId: id, status: "pending" } });
  return { ...payment, charges };
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
 * Checks that `sourceId` may pay `payment` (call inside the payment's transaction, with a
 * transaction context); field errors on `source`. A single-use source pays one payment only.
 */
async function usableSource(
  ctx: ServiceContext,
  sourceId: string | null | undefined,
  payment: Payment,
  errors: FieldErrorCollector,
) {
  if (!sourceId) {
    errors.add("source", "is required");
    return null;
  }
  // locked, so two payments cannot take one single-use source at the same time
  await lockTenantRow(ctx.prisma, ctx, "Source", sourceId);
  const source = await ctx.prisma.source.findFirst({ where: { id: sourceId, ...tenant(ctx) } });
  if (!source) {
    errors.add("source", `unknown source ${sourceId}`);
    return null;
  }
  if (source.usage === "single_use") {
    const other = await ctx.prisma.payment.findFirst({
      where: { sourceId: source.id, id: { not: payment.id }, status: { not: "canceled" } },
      select: { id: true },
    });
    if (other) errors.add("source", `single-use source ${source.id} belongs to payment ${other.id}`);
  }
  if (source.customerId && payment.customerId && source.customerId !== payment.customerId) {
    errors.add("source", `source ${source.id} belongs to another customer than the payment's (${payment.customerId})`);
  }
  if (source.status !== "chargeable") errors.add("source", `source ${source.id} is ${source.status}, not chargeable`);
  if (source.amount !== null && !source.amount.equals(payment.amount)) {
    errors.add(
      "source",
      `source ${source.id} is for ${source.amount.toFixed()}, the payment is ${payment.amount.toFixed()}`,
    );
  }
  gatewayFor(ctx, source.gateway, errors, "source");
  return source;
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
 * other charges in flight (the invoice row is locked meanwhile).
 */
async function startCharge(tx: Tx, ctx: ServiceContext, payment: Payment, source: Source): Promise<StartedCharge> {
  const next = paymentTransition(payment.status, "start_charge");
  if (payment.invoiceId) {
    await lockTenantRow(tx, ctx, "Invoice", payment.invoiceId);
    const [balance] = await invoiceBalances(withinTransaction(ctx, tx), [payment.invoiceId]);
    const room = new Decimal(balance.due).minus(balance.inFlight);
    if (payment.amount.greaterThan(room)) {
      throw ValidationError.field(
        "amount",
        `exceeds what is due on invoice ${payment.invoiceId}: ${Decimal.max(room, 0).toFixed()} ${payment.currencyId}`,
      );
    }
  }
  const last = await tx.paymentCharge.aggregate({ where: { paymentId: payment.id }, _max: { attempt: true } });
  const attempt = (last._max.attempt ?? 0) + 1;
  const charge = await tx.paymentCharge.create({
    data: {
      // derived from (payment, attempt): when a keyed request rolls back after the gateway call
      // (a crash, a 5xx), its retry writes attempt N again with the same id and the gateway,
      // idempotent per id, answers the first call's result instead of charging twice
      id: derivedId("chg", `${payment.id}/${attempt}`),
      paymentId: payment.id,
      organizationId: payment.organizationId,
      attempt,
      sourceId: source.id,
      gateway: source.gateway,
      amount: payment.amount,
      currencyId: payment.currencyId,
      status: "pending",
    },
  });
  await tx.payment.update({
    where: { id: payment.id },
    data: { status: next, sourceId: source.id, failureReason: null },
  });
  return { chargeId: charge.id, gateway: findGateway(source.gateway, ctx.settings.paymentGateways)!, source };
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
 * with `forgetNewCardOnDecline`, a new card whose first charge declined removed from its customer).
 */
async function settleCharge(
  ctx: ServiceContext,
  paymentId: string,
  chargeId: string,
  result: ChargeResult,
  options: ChargeOptions = {},
): Promise<Payment> {
  return ctx.prisma.$transaction(async (tx) => {
    const payment = await lockPayment(tx, ctx, paymentId);
    // answered, or canceled, since the charge started (a second checkout answer, a DELETE)
    if (!payment.charges.some((c) => c.id === chargeId))
      throw new InvalidStateError(`Payment ${paymentId} was answered or canceled meanwhile`);
    const txCtx = withinTransaction(ctx, tx);
    // the invoice's balance before the answer: invoice.paid when this payment leaves nothing due
    const settling = payment.invoiceId ? await settlingInvoice(txCtx, payment.invoiceId) : null;
    const event = result.status === "succeeded" ? "succeed" : "decline";
    const next = paymentTransition(payment.status, event);
    await tx.paymentCharge.update({
      where: { id: chargeId },
      data: {
        status: result.status,
        reference: result.reference,
        ...(result.status === "declined"
          ? { failureCode: result.failureCode, failureMessage: result.failureMessage }
          : {}),
      },
    });
    if (payment.source?.usage === "single_use") {
      await tx.source.update({
        where: { id: payment.source.id },
        data: { status: result.status === "succeeded" ? "consumed" : "failed" },
      });
    } else if (
      payment.source &&
      result.status === "declined" &&
      options.forgetNewCardOnDecline &&
      forgetsDeclinedSource(
        {
          ...payment.source,
          earlierCharges: await tx.paymentCharge.count({
            where: { sourceId: payment.source.id, id: { not: chargeId } },
          }),
        },
        options.forgetNewCardOnDecline,
      )
    ) {
      // a new card whose first charge declined is not kept (as a card whose set-up failed is not attached)
      await tx.customer.updateMany({
        where: { id: payment.source.customerId!, defaultSourceId: payment.source.id },
        data: { defaultSourceId: null },
      });
      await tx.source.update({ where: { id: payment.source.id }, data: { customerId: null, status: "failed" } });
    }
    const settled = await tx.payment.update({
      where: { id: paymentId },
      data:
        result.status === "succeeded"
          ? { status: next, paymentDate: ctx.now(), failureReason: null }
          : { status: next, failureReason: `${result.failureCode}: ${result.failureMessage}` },
    });
    if (result.status === "succeeded") {
      await recordEvents(txCtx, "payment.succeeded", "payment", [paymentId]);
      if (settling) await settling.recordPaid();
    } else {
      await recordEvents(txCtx, "payment.failed", "payment", [paymentId]);
      if (payment.invoiceId) await recordEvents(txCtx, "invoice.payment_failed", "invoice", [payment.invoiceId]);
      // the billing run's charge of a renewal (its payment's known id): the subscription is past due when this is
      // its latest cycle invoice (docs/dunning.md "Past-due subscriptions")
      if (payment.invoiceId && payment.id === collectionPaymentId(payment.invoiceId))
        await movePastDue(txCtx, [payment.invoiceId], true);
    }
    return settled;
  });
}

/** Charges a started reusable charge at its gateway and records the answer. */
async function chargeNow(
  ctx: ServiceContext,
  payment: Payment,
  started: StartedCharge,
  options: ChargeOptions = {},
): Promise<Payment> {
  const result = await started.gateway.charge!({
    chargeId: started.chargeId,
    amount: payment.amount.toFixed(),
    currency: payment.currencyId,
    description: payment.description,
    source: { id: started.source.id, data: started.source.data as Record<string, unknown> },
  });
  return settleCharge(ctx, payment.id, started.chargeId, result, options);
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
 * the transaction commits). Errors as authorizePayment's.
 */
export async function authorizeLocked(
  txCtx: ServiceContext,
  id: string,
  sourceId: string | null | undefined,
): Promise<PendingCharge | null> {
  const tx = txCtx.prisma as unknown as Tx;
  const payment = await lockPayment(tx, txCtx, id);
  const errors = new FieldErrorCollector();
  const source = await usableSource(txCtx, sourceId, payment, errors);
  errors.throwIfAny("Cannot authorize the payment");
  if (source!.usage !== "reusable") {
    const next = paymentTransition(payment.status, "attach_source");
    await tx.payment.update({ where: { id }, data: { status: next, sourceId: source!.id } });
    return null;
  }
  return { payment, started: await startCharge(tx, txCtx, payment, source!) };
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
