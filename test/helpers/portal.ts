/**
 * Customer-portal fixtures (docs/customer-portal.md): a customer of `acme` (test mode) with three
 * finalized invoices, a monthly subscription and a saved card; another customer of `acme` with an
 * invoice and a card; the branding that lets customers cancel; and helpers to open a session link
 * over HTTP and call /graphql with the portal credential.
 */
import { expect } from "vitest";
import { chileanCustomer, type TestServer } from "./server.js";

export interface PortalFixture {
  customerId: string;
  invoiceIds: string[];
  subscriptionId: string;
  cardId: string;
  other: { customerId: string; invoiceId: string; cardId: string; subscriptionId: string };
}

async function created(s: TestServer, path: string, body: unknown) {
  const res = await s.rest("POST", path, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** A finalized CL33 invoice of `customer` with total 2916 (docs/invoice-totals.md's example) times `times`. */
export async function finalizedInvoice(s: TestServer, customer: string, times = 1): Promise<string> {
  const inv = await created(s, "/v1/invoices/", {
    customer,
    lines: [
      { name: "Consultoría", quantity: 2 * times, amount: 1000 },
      { name: "Soporte", amount: 500, discount: 10 },
    ],
  });
  const finalized = await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`);
  expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
  return inv.id;
}

/** The fixture's rows, made through the API as a business would. */
export async function portalFixture(s: TestServer): Promise<PortalFixture> {
  const customerId = (await created(s, "/v1/customers/", chileanCustomer({ name: "Cliente Portal SpA" }))).id;
  const otherId = (
    await created(s, "/v1/customers/", chileanCustomer({ name: "Otro Cliente SpA", email: "otro@cliente.cl" }))
  ).id;
  const invoiceIds = [];
  for (const times of [1, 2, 3]) invoiceIds.push(await finalizedInvoice(s, customerId, times));
  const otherInvoice = await finalizedInvoice(s, otherId);
  const [plan] = (
    await created(s, "/v1/products/", {
      name: "Hosting",
      plans: [{ name: "Plan Pro", amount: 10000, currency: "CLP", frequency: "monthly" }],
    })
  ).plans;
  const subscriptionId = (await created(s, "/v1/subscriptions/", { customer: customerId, lines: [{ plan: plan.id }] }))
    .id;
  const otherSubscription = (await created(s, "/v1/subscriptions/", { customer: otherId, lines: [{ plan: plan.id }] }))
    .id;
  const cardId = (
    await created(s, "/v1/sources/", { gateway: "test", data: { token: "tok_mastercard" }, customer: customerId })
  ).id;
  const otherCard = (
    await created(s, "/v1/sources/", { gateway: "test", data: { token: "tok_visa" }, customer: otherId })
  ).id;
  const branding = await s.graphql(
    `mutation { updateOrganizationBranding(input: {
      businessName: "Acme Hosting", colorBackground: "#f7f3ea", colorAsset: "#7a3e00",
      termsOfServiceUrl: "https://acme.example/terms", privacyPolicyUrl: "https://acme.example/privacy",
      portalCancelSubscriptions: true }) { portalCancelSubscriptions } }`,
  );
  expect(branding.body.data?.updateOrganizationBranding.portalCancelSubscriptions, JSON.stringify(branding.body)).toBe(
    true,
  );
  return {
    customerId,
    invoiceIds,
    subscriptionId,
    cardId,
    other: { customerId: otherId, invoiceId: otherInvoice, cardId: otherCard, subscriptionId: otherSubscription },
  };
}

/** A new session of `customer` (the key, as the business hands it out). */
export async function sessionKey(s: TestServer, customer: string, returnUrl = "https://acme.example/account") {
  const res = await s.rest("POST", "/v1/customer_base/sessions/", { body: { customer, return_url: returnUrl } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; key: string };
}

/** The portal credential a browser would hold after opening `/portal/<key>`. */
export interface PortalCookies {
  credential: string;
  csrf: string;
  /** the Set-Cookie values as sent */
  setCookies: string[];
  response: Response;
  html: string;
}

/** Opens the session link over HTTP and returns the cookies it set. */
export async function openLink(s: TestServer, key: string): Promise<PortalCookies> {
  const response = await fetch(`${s.url}/portal/${key}`);
  const html = await response.text();
  const setCookies = response.headers.getSetCookie();
  const value = (name: string) =>
    setCookies
      .find((c) => c.startsWith(`${name}=`))
      ?.split(";")[0]
      .slice(name.length + 1) ?? "";
  return { credential: value("portal_credential"), csrf: value("portal_csrf"), setCookies, response, html };
}

/** A GraphQL call with the portal credential (and its CSRF header unless `csrf` is null). */
export async function portalGraphql(
  s: TestServer,
  cookies: Pick<PortalCookies, "credential" | "csrf">,
  query: string,
  variables: Record<string, unknown> = {},
  options: { csrf?: string | null; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    cookie: `portal_credential=${cookies.credential}; portal_csrf=${cookies.csrf}`,
    ...options.headers,
  };
  const csrf = options.csrf === undefined ? cookies.csrf : options.csrf;
  if (csrf !== null) headers["x-portal-csrf"] = csrf;
  const res = await fetch(`${s.url}/graphql`, { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  return { status: res.status, body: await res.json(), headers: res.headers };
}
