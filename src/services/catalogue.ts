/**
 * What the catalogue services (products and plans, addons, coupons; docs/catalogue.md) share:
 * field checks that add to a FieldErrorCollector, a currency cache, and the archive-or-delete rule.
 */
import { FieldErrorCollector } from "../domain/errors.js";
import { MAX_AMOUNT_DECIMALS } from "../domain/pricing.js";
import { Decimal, toDecimal, type DecimalInput } from "../domain/money.js";
import { mergeMetadata, type Metadata } from "../domain/metadata.js";
import { isOneOf } from "../domain/catalogue.js";
import type { ServiceContext } from "./context.js";
import { findCurrency } from "./reference.js";

export type Currency = NonNullable<Awaited<ReturnType<typeof findCurrency>>>;

/** Checks of one resource's fields; every problem becomes a field error (`prefix` + field). */
export class Fields {
  private readonly currencies = new Map<string, Promise<Currency | null>>();
  constructor(
    readonly ctx: ServiceContext,
    readonly errors: FieldErrorCollector = new FieldErrorCollector(),
  ) {}

  /** Text: required (on create) or optional, at most `max` characters; "" clears an optional one. */
  text(
    path: string,
    value: string | null | undefined,
    current: string | null | undefined,
    { required = false, max = 200 } = {},
  ) {
    const result = value !== undefined ? (value === null || value.trim() === "" ? null : value) : (current ?? null);
    if (required && !result) this.errors.add(path, "is required");
    if (result && result.length > max) this.errors.add(path, `must have at most ${max} characters`);
    return result;
  }

  /** One of `values`; `fallback` when absent and there is no current value. */
  choice<T extends string>(
    path: string,
    values: readonly T[],
    value: string | null | undefined,
    current: string | null | undefined,
    fallback: T,
  ): T {
    const result = value ?? current ?? fallback;
    if (!isOneOf(values, result)) this.errors.add(path, `must be one of ${values.join(", ")}`);
    return result as T;
  }

  /** A decimal amount: required or not, not negative (or positive), at most 6 decimals. */
  amount(
    path: string,
    value: DecimalInput | null | undefined,
    current: DecimalInput | null | undefined,
    { required = true, positive = false } = {},
  ): Decimal | null {
    const raw = value !== undefined ? value : current;
    if (raw === null || raw === undefined) {
      if (required) this.errors.add(path, "is required");
      return null;
    }
    let d: Decimal;
    try {
      d = toDecimal(raw);
      if (!d.isFinite()) throw new Error("not finite");
    } catch {
      this.errors.add(path, "must be a decimal number");
      return null;
    }
    if (d.isNegative()) this.errors.add(path, "must not be negative");
    else if (positive && d.isZero()) this.errors.add(path, "must be positive");
    if (d.decimalPlaces() > MAX_AMOUNT_DECIMALS)
      this.errors.add(path, `must have at most ${MAX_AMOUNT_DECIMALS} decimal places`);
    return d;
  }

  /** A positive integer or null. */
  count(path: string, value: number | null | undefined, current: number | null | undefined): number | null {
    const result = value !== undefined ? value : (current ?? null);
    if (result !== null && (!Number.isInteger(result) || result < 1))
      this.errors.add(path, "must be a positive integer");
    return result;
  }

  /** A known currency (ISO 4217), looked up once per request. */
  async currency(
    path: string,
    value: string | null | undefined,
    currentId: string | null | undefined,
    { required = true } = {},
  ): Promise<Currency | null> {
    const id = value !== undefined ? value || null : (currentId ?? null);
    if (!id) {
      if (required) this.errors.add(path, "is required (an ISO 4217 code such as CLP)");
      return null;
    }
    const key = id.toUpperCase();
    let found = this.currencies.get(key);
    if (!found) {
      const lookup = new FieldErrorCollector();
      found = findCurrency(this.ctx, id, lookup, path).then((c) => (lookup.empty ? c : null));
      this.currencies.set(key, found);
    }
    const currency = await found;
    if (!currency)
      this.errors.add(
        path,
        /^[A-Za-z]{3}$/.test(id) ? `unknown currency ${key}` : "must be a three-letter ISO 4217 code",
      );
    return currency;
  }

  metadata(path: string, patch: Record<string, unknown> | null | undefined, current: unknown): Metadata {
    let merged = (current ?? {}) as Metadata;
    this.errors.collect(() => {
      merged = mergeMetadata((current ?? {}) as Metadata, patch, path);
    });
    return merged;
  }
}

/** Result of a catalogue delete: removed (`deleted`) or kept and archived because something uses it. */
export interface DeleteResult {
  id: string;
  deleted: boolean;
  archived: boolean;
}

/** The columns an archive writes: status `archived`, `archivedAt` the time of the delete. */
export interface ArchivedColumns {
  status: "archived";
  archivedAt: Date;
}

/**
 * The catalogue's delete rule (docs/catalogue.md "Rules"), for products, plans, addons and
 * coupons: a row something uses (`uses` counts it) is archived instead and stays readable
 * (`archive` writes ArchivedColumns to the rows that are not archived yet, so deleting an
 * archived row again changes nothing); a row nothing uses is deleted (`remove`). Run inside the
 * caller's transaction `ctx` (atomically), with the row loaded (404) and locked.
 */
export async function deleteOrArchive(
  ctx: ServiceContext,
  id: string,
  row: {
    uses: () => Promise<number>;
    archive: (columns: ArchivedColumns) => Promise<unknown>;
    remove: () => Promise<unknown>;
  },
): Promise<DeleteResult> {
  if ((await row.uses()) > 0) {
    await row.archive({ status: "archived", archivedAt: ctx.now() });
    return { id, deleted: false, archived: true };
  }
  await row.remove();
  return { id, deleted: true, archived: false };
}
