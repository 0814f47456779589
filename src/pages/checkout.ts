/**
 * The hosted test checkout of the built-in `redirect` gateway (infra/gateways/redirect.ts):
 * `GET /checkout/<token>` shows the payment waiting at a redirect source with Approve and Reject
 * buttons; `POST /checkout/<token>` with `decision=approve|reject` (an HTML form) settles it and
 * sends the customer to the source's `return_url` (`?payment=<id>&status=<status>`), or shows the
 * result. No API key: the token in the address is the secret (stored hashed). It stands in for an
 * external gateway's page, so it sits beside the REST adapter (the same layer, src/pages/) as one
 * more HTTP surface over the services: it reads and writes only through services/payments.ts
 * (`findCheckout`, `completeCheckout`), never Prisma directly (docs/architecture.md).
 */
import { DomainError } from "../domain/errors.js";
import { CHECKOUT_CSP } from "../infra/http-security.js";
import { formatMoney } from "../domain/format-money.js";
import type { ServiceContext } from "../services/context.js";
import { completeCheckout, findCheckout } from "../services/payments.js";

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function page(title: string, body: string, status = 200): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
button{font-size:1rem;padding:.5rem 1rem;margin-right:.5rem}.amount{font-size:2rem;font-weight:bold}</style>
</head><body><p><em>Test checkout: no real money moves.</em></p>${body}</body></html>`;
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": CHECKOUT_CSP,
    },
  });
}

/** Handles `/checkout/<token>`; `base` is a use-case context without auth (the token decides the tenant). */
export async function handleCheckout(
  request: Request,
  token: string,
  base: Omit<ServiceContext, "auth">,
): Promise<Response> {
  if (request.method === "GET") {
    const checkout = await findCheckout(base.prisma, token);
    if (!checkout) return page("Not found", "<h1>Unknown checkout</h1>", 404);
    const { payment, organizationName } = checkout;
    if (!payment || payment.status !== "processing") {
      const state = payment ? `This payment is ${escape(payment.status)}.` : "No payment has been sent here yet.";
      return page(
        "Checkout",
        `<h1>${escape(organizationName)}</h1><p>${state}</p>`,
        payment?.status === "succeeded" ? 200 : 409,
      );
    }
    const currency = checkout.currency!;
    return page(
      `Pay ${organizationName}`,
      `<h1>${escape(organizationName)}</h1>
<p class="amount" id="amount">${escape(formatMoney(payment.amount.toString(), currency))}</p>
<p id="description">${escape(payment.description ?? "")}</p>
<p>Payment <code id="payment">${escape(payment.id)}</code></p>
<form method="post"><input type="hidden" name="decision" value="approve"><button type="submit">Approve</button></form>
<form method="post"><input type="hidden" name="decision" value="reject"><button type="submit">Reject</button></form>`,
    );
  }
  if (request.method !== "POST") return page("Method not allowed", "<h1>Use GET or POST</h1>", 405);
  const form = new URLSearchParams(await request.text());
  const decision = form.get("decision");
  if (decision !== "approve" && decision !== "reject")
    return page("Bad request", "<h1>decision must be approve or reject</h1>", 400);
  try {
    const { payment, source } = await completeCheckout(base, token, decision);
    if (source.returnUrl) {
      const back = new URL(source.returnUrl);
      back.searchParams.set("payment", payment.id);
      back.searchParams.set("status", payment.status);
      return new Response(null, { status: 303, headers: { location: back.toString() } });
    }
    return page("Checkout", `<h1>Payment ${escape(payment.status)}</h1><p><code>${escape(payment.id)}</code></p>`);
  } catch (e) {
    if (e instanceof DomainError) return page("Checkout", `<h1>${escape(e.message)}</h1>`, e.status);
    throw e;
  }
}
