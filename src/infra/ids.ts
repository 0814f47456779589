/**
 * Resource ids: `<prefix>_<24 random base62 chars>` from crypto randomness (docs/rest.md "Tenancy, ids, money").
 * The prefix names the type; the Relay global id of a node is its resource id.
 */
import { createHash } from "node:crypto";
import { customAlphabet } from "nanoid";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const random24 = customAlphabet(BASE62, 24);

export const ID_PREFIXES = {
  org: "Organization",
  key: "ApiKey",
  cus: "Customer",
  inv: "Invoice",
  ord: "Order",
  cre: "CreditNote",
  lin: "Line",
  pay: "Payment",
  sou: "Source",
  pro: "Product",
  pla: "Plan",
  add: "Addon",
  cou: "Coupon",
  sub: "Subscription",
  usa: "Usage",
  rem: "Reminder",
  ses: "Session",
  swa: "Swap",
  pur: "Purchase",
  evt: "Event",
  // webhooks (docs/webhooks.md): an endpoint, one attempt of a message
  we: "WebhookEndpoint",
  del: "WebhookAttempt",
  // Chile's SII (docs/sii-setup.md)
  caf: "Caf",
  cer: "Certificate",
  chg: "PaymentCharge",
  pii: "PendingInvoiceItem",
  clk: "TestClock",
  // the customer portal (docs/customer-portal.md)
  pcr: "PortalCredential",
  // dunning (docs/dunning.md)
  dun: "DunningCampaign",
  dnr: "DunningRun",
  dat: "DunningAttempt",
  // dashboard members (docs/dashboard.md)
  mem: "Member",
  miv: "MemberInvite",
  mse: "MemberSession",
} as const;

export type IdPrefix = keyof typeof ID_PREFIXES;

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${random24()}`;
}

/**
 * An id of `prefix` derived from `seed` (the same seed gives the same id): for a row that must get
 * the same id when it is written again after a rollback, e.g. a payment's charge attempt N, whose
 * id is the idempotency key at the gateway. 24 base62 characters of SHA-256(seed); not a secret.
 */
export function derivedId(prefix: IdPrefix, seed: string): string {
  const digest = createHash("sha256").update(seed).digest();
  let chars = "";
  for (let i = 0; i < 24; i++) chars += BASE62[digest[i] % 62];
  return `${prefix}_${chars}`;
}

/** The prefix of an id (`inv` for `inv_...`), or undefined when it has none we know. */
export function idPrefix(id: string): IdPrefix | undefined {
  const prefix = id.split("_", 1)[0];
  return Object.hasOwn(ID_PREFIXES, prefix) ? (prefix as IdPrefix) : undefined;
}

/** Longest random part accepted in an id (ours have 24 characters; a little room for imported ones). */
const ID_SHAPE = /^([a-z]{2,3})_[0-9A-Za-z]{1,64}$/;

/**
 * Whether `id` has the shape of a resource id: a known prefix (of `prefixes` when given), `_`, and
 * 1 to 64 base62 characters. Checked before any query, so a malformed id (NUL, odd bytes, another
 * alphabet) never reaches the database; it reads as "no such resource".
 */
export function isWellFormedId(id: string, prefixes?: readonly IdPrefix[]): boolean {
  const m = ID_SHAPE.exec(id);
  if (!m || !Object.hasOwn(ID_PREFIXES, m[1])) return false;
  return !prefixes || prefixes.includes(m[1] as IdPrefix);
}

/** A secret of `bytes` random bytes in base62 (API keys, session keys). */
export function randomSecret(length = 32): string {
  return customAlphabet(BASE62, length)();
}
