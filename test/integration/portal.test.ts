/**
 * The customer portal over HTTP, without a browser (docs/customer-portal.md): the session link
 * exchanged for the credential cookies, the page's headers, the portal scope (a portal credential
 * is refused every field not marked for the portal, an API key the `portal` query), the CSRF
 * header, another customer's ids refused everywhere, expired, unknown and revoked links, paying
 * with an Idempotency-Key, sources and the default source, cancelling at period end.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import {
  finalizedInvoice,
  openLink,
  portalFixture,
  portalGraphql,
  sessionKey,
  type PortalCookies,
  type PortalFixture,
} from "../helpers/portal.js";

let s: TestServer;
let f: PortalFixture;
let cookies: PortalCookies;
beforeAll(async () => {
  s = await startTestServer();
  f = await portalFixture(s);
  cookies = await openLink(s, (await sessionKey(s, f.customerId)).key);
});
afterAll(async () => s?.close());

const codeOf = (body: { errors?: { extensions?: { code?: string } }[] }) => body.errors?.[0]?.extensions?.code;

describe("the session link", () => {
  it("serves the portal with the credential in an HttpOnly, SameSite=Strict cookie and a strict CSP", async () => {
    expect(cookies.response.status).toBe(200);
    expect(cookies.html).toContain('<div id="app"></div>');
    expect(cookies.html).toMatch(
      /<script type="module" crossorigin src="\/portal\/assets\/index-[\w-]+\.js"><\/script>/,
    );
    expect(cookies.credential).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(cookies.csrf).toMatch(/^[0-9A-Za-z]{32}$/);
    const [credential, csrf] = cookies.setCookies;
    expect(credential).toMatch(/^portal_credential=\w{32}; Path=\/; Max-Age=1[78]\d\d; SameSite=Strict; HttpOnly$/);
    expect(csrf).toMatch(/^portal_csrf=\w{32}; Path=\/; Max-Age=1[78]\d\d; SameSite=Strict$/);
    const csp = cookies.response.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("style-src 'self';");
    expect(csp).not.toContain("unsafe-inline");
    expect(cookies.response.headers.get("cache-control")).toBe("no-store");
    // only hashes are stored
    const row = await s.database.prisma.portalCredential.findFirstOrThrow({ where: { customerId: f.customerId } });
    expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.tokenHash).not.toContain(cookies.credential);
    // the page's script is served by the service
    const script = /src="(\/portal\/assets\/[^"]+)"/.exec(cookies.html)![1];
    const js = await fetch(`${s.url}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
  });

  it("opens the portal query as the session's customer", async () => {
    const res = await portalGraphql(
      s,
      cookies,
      `{ portal { locale cancelSubscriptions gateways settings { businessName returnUrl displayInvoices }
         colors { background text asset onAsset adjusted }
         customer { id name invoices { totalCount edges { node { id status amountDue } } }
           subscriptions { totalCount } sources { id isDefault } } } }`,
    );
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const portal = res.body.data.portal;
    expect(portal.locale).toBe("es");
    expect(portal.cancelSubscriptions).toBe(true);
    expect(portal.gateways).toEqual(["test", "redirect"]);
    expect(portal.settings).toEqual({
      businessName: "Acme Hosting",
      returnUrl: "https://acme.example/account",
      displayInvoices: true,
    });
    // the brown asset colour on cream is readable (contrast >= 4.5): kept
    expect(portal.colors).toEqual({
      background: "#f7f3ea",
      text: "#111111",
      asset: "#7a3e00",
      onAsset: "#ffffff",
      adjusted: false,
    });
    expect(portal.customer.id).toBe(f.customerId);
    expect(portal.customer.invoices.totalCount).toBe(3);
    expect(portal.customer.invoices.edges.map((e: { node: { id: string } }) => e.node.id).sort()).toEqual(
      [...f.invoiceIds].sort(),
    );
    expect(portal.customer.subscriptions.totalCount).toBe(1);
    expect(portal.customer.sources).toEqual([{ id: f.cardId, isDefault: false }]);
  });

  it("needs the CSRF header with the cookie (403 without it or with another value)", async () => {
    for (const csrf of [null, "", "x".repeat(32)]) {
      const res = await portalGraphql(s, cookies, "{ portal { customer { id } } }", {}, { csrf });
      expect(res.status).toBe(403);
      expect(codeOf(res.body)).toBe("permission_denied");
    }
  });

  it(
    "shows the expired page for an unknown key, an expired session and a revoked one, " +
      "with the return link when known",
    async () => {
      const unknown = await fetch(`${s.url}/portal/cs_${"a".repeat(32)}`);
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get("set-cookie")).toBeNull();
      const unknownHtml = await unknown.text();
      expect(unknownHtml).toContain("This link has expired");
      expect(unknownHtml).not.toContain("<a href");

      const expired = await sessionKey(s, f.customerId, "https://acme.example/expired");
      await s.database.prisma.customerSession.update({
        where: { id: expired.id },
        data: { expiresAt: new Date(Date.now() - 1000) },
      });
      const page = await fetch(`${s.url}/portal/${expired.key}`);
      expect(page.status).toBe(404);
      const html = await page.text();
      expect(html).toContain("Este enlace ha vencido");
      expect(html).toContain('<a href="https://acme.example/expired">');
      expect(html).not.toContain("Cliente Portal");

      // revoking a session ends its link and the credentials already given for it
      const revokedSession = await sessionKey(s, f.customerId, "https://acme.example/revoked");
      const held = await openLink(s, revokedSession.key);
      expect((await portalGraphql(s, held, "{ portal { customer { id } } }")).status).toBe(200);
      const revoke = await s.graphql(`mutation($id: ID!) { revokeCustomerSession(id: $id) { id } }`, {
        id: revokedSession.id,
      });
      expect(revoke.body.data.revokeCustomerSession.id).toBe(revokedSession.id);
      const after = await portalGraphql(s, held, "{ portal { customer { id } } }");
      expect(after.status).toBe(401);
      expect(codeOf(after.body)).toBe("authentication_required");
      const reopened = await fetch(`${s.url}/portal/${revokedSession.key}`);
      expect(reopened.status).toBe(404);
      expect(await reopened.text()).toContain('<a href="https://acme.example/revoked">');
      expect((await s.rest("GET", `/v1/customer_base/sessions/${revokedSession.key}/`)).status).toBe(404);
    },
  );

  it("stops the credential when it expires", async () => {
    const held = await openLink(s, (await sessionKey(s, f.customerId)).key);
    await s.database.prisma.portalCredential.updateMany({
      where: { tokenHash: { not: "" }, createdAt: { gt: new Date(Date.now() - 60_000) } },
      data: { expiresAt: new Date(Date.now() - 1) },
    });
    const res = await portalGraphql(s, held, "{ portal { customer { id } } }");
    expect(res.status).toBe(401);
    // cookies is used by later tests: give it a new credential
    cookies = await openLink(s, (await sessionKey(s, f.customerId)).key);
  });
});

describe("the portal scope", () => {
  it("refuses a portal credential every field not marked for the portal", async () => {
    for (const query of [
      "{ customers { totalCount } }",
      "{ invoices { totalCount } }",
      `{ node(id: "${f.invoiceIds[0]}") { id } }`,
      `{ upcomingInvoice(subscription: "${f.subscriptionId}") { total } }`,
      "{ organizationBranding { name } }",
      `mutation { createCustomer(input: { name: "x" }) { id } }`,
      `mutation { finalizeInvoice(id: "${f.invoiceIds[0]}") { id } }`,
      `mutation { createCustomerSession(input: { customer: "${f.customerId}", returnUrl: "https://x.example" }) { key } }`,
    ]) {
      const res = await portalGraphql(s, cookies, query);
      // a nullable root field answers null beside the error, a non-null one nulls the whole data
      expect(
        Object.values(res.body.data ?? {}).every((v) => v === null),
        query,
      ).toBe(true);
      expect(codeOf(res.body), query).toBe("permission_denied");
    }
  });

  it("refuses an API key the portal query", async () => {
    const res = await s.graphql("{ portal { customer { id } } }");
    expect(codeOf(res.body)).toBe("permission_denied");
    expect(res.body.errors[0].message).toBe("Query.portal needs a customer-portal credential");
  });

  it("refuses another customer's ids in every query and mutation", async () => {
    const read = await portalGraphql(s, cookies, `query($id: ID!) { portal { invoice(id: $id) { id } } }`, {
      id: f.other.invoiceId,
    });
    expect(read.body.data.portal.invoice).toBeNull();
    const attempts: [string, Record<string, unknown>, string][] = [
      [
        `mutation($i: ID!, $s: ID!) { payInvoice(invoice: $i, source: $s) { redirectUrl } }`,
        { i: f.other.invoiceId, s: f.cardId },
        "not_found",
      ],
      [
        `mutation($i: ID!, $s: ID!) { payInvoice(invoice: $i, source: $s) { redirectUrl } }`,
        { i: f.invoiceIds[0], s: f.other.cardId },
        "validation_error",
      ],
      [`mutation($id: ID!) { detachSource(id: $id) { id } }`, { id: f.other.cardId }, "not_found"],
      [`mutation($id: ID!) { setDefaultSource(id: $id) { id } }`, { id: f.other.cardId }, "not_found"],
      [
        `mutation($id: ID!) { cancelSubscription(id: $id, atPeriodEnd: true) { id } }`,
        { id: f.other.subscriptionId },
        "not_found",
      ],
      [
        `mutation($id: ID!) { updateCustomer(id: $id, input: { email: "x@y.cl" }) { id } }`,
        { id: f.other.customerId },
        "not_found",
      ],
      [
        `mutation($c: ID!) { createSource(input: { gateway: "test", customer: $c, data: { token: "tok_visa" } }) { id }
          }`,
        { c: f.other.customerId },
        "validation_error",
      ],
    ];
    for (const [query, variables, code] of attempts) {
      const res = await portalGraphql(s, cookies, query, variables);
      expect(codeOf(res.body), query).toBe(code);
    }
    // nothing of the other customer changed
    const other = await s.database.prisma.customer.findUniqueOrThrow({ where: { id: f.other.customerId } });
    expect(other.email).toBe("otro@cliente.cl");
    expect(await s.database.prisma.payment.count({ where: { invoiceId: f.other.invoiceId } })).toBe(0);
    const sub = await s.database.prisma.subscription.findUniqueOrThrow({ where: { id: f.other.subscriptionId } });
    expect(sub.cancelAtPeriodEnd).toBe(false);
  });

  it("lets the customer change only the billing e-mail and address", async () => {
    const bad = await portalGraphql(
      s,
      cookies,
      `mutation($id: ID!) { updateCustomer(id: $id, input: { name: "Nuevo", email: "a@b.cl" }) { id } }`,
      {
        id: f.customerId,
      },
    );
    expect(codeOf(bad.body)).toBe("validation_error");
    expect(bad.body.errors[0].extensions.fields).toEqual({ name: ["cannot be changed in the customer portal"] });
    const ok = await portalGraphql(
      s,
      cookies,
      `mutation($id: ID!) { updateCustomer(id: $id, input: { email: "facturas@cliente.cl", address: "Nueva 456" }) {
        email address name } }`,
      { id: f.customerId },
    );
    expect(ok.body.data.updateCustomer).toEqual({
      email: "facturas@cliente.cl",
      address: "Nueva 456",
      name: "Cliente Portal SpA",
    });
  });
});

describe("what the customer can do", () => {
  it("pays an invoice once per Idempotency-Key", async () => {
    const pay = `mutation($i: ID!, $s: ID!) { payInvoice(invoice: $i, source: $s) { redirectUrl payment { id status
      amount } } }`;
    const variables = { i: f.invoiceIds[0], s: f.cardId };
    const first = await portalGraphql(s, cookies, pay, variables, { headers: { "idempotency-key": "pay-1" } });
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.payInvoice).toEqual({
      redirectUrl: null,
      payment: { id: expect.stringMatching(/^pay_/), status: "succeeded", amount: "2916" },
    });
    const again = await portalGraphql(s, cookies, pay, variables, { headers: { "idempotency-key": "pay-1" } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const payments = await s.database.prisma.payment.findMany({ where: { invoiceId: f.invoiceIds[0] } });
    expect(payments.map((p) => [p.status, p.amount.toString(), p.sourceId])).toEqual([["succeeded", "2916", f.cardId]]);
    // paid: nothing is due any more
    const twice = await portalGraphql(s, cookies, pay, variables);
    expect(codeOf(twice.body)).toBe("invalid_state");
  });

  it("reports a declined new card, forgets the card and keeps one payment for the retry", async () => {
    const declined = await portalGraphql(
      s,
      cookies,
      `mutation { createSource(input: { gateway: "test", data: { token: "tok_chargeDeclined" } }) { id customer { id } }
        }`,
    );
    expect(declined.body.data.createSource.customer.id).toBe(f.customerId);
    const pay = `mutation($i: ID!, $s: ID!) { payInvoice(invoice: $i, source: $s) { payment { id status failureReason }
      } }`;
    const declinedId = declined.body.data.createSource.id;
    const first = await portalGraphql(s, cookies, pay, { i: f.invoiceIds[1], s: declinedId });
    expect(first.body.data.payInvoice.payment.status).toBe("requires_payment_method");
    expect(first.body.data.payInvoice.payment.failureReason).toMatch(/^card_declined: /);
    // a new card whose first charge declined is not kept: detached and failed in the decline's transaction
    const forgotten = await s.database.prisma.source.findUniqueOrThrow({ where: { id: declinedId } });
    expect([forgotten.customerId, forgotten.status]).toEqual([null, "failed"]);
    const listed = await portalGraphql(s, cookies, "{ portal { customer { sources { id } } } }");
    expect(listed.body.data.portal.customer.sources).toEqual([{ id: f.cardId }]);
    // and cannot be tried again
    const again = await portalGraphql(s, cookies, pay, { i: f.invoiceIds[1], s: declinedId });
    expect(codeOf(again.body)).toBe("validation_error");
    const retry = await portalGraphql(s, cookies, pay, { i: f.invoiceIds[1], s: f.cardId });
    expect(retry.body.data.payInvoice.payment).toEqual({
      id: first.body.data.payInvoice.payment.id,
      status: "succeeded",
      failureReason: null,
    });
    expect(await s.database.prisma.payment.count({ where: { invoiceId: f.invoiceIds[1] } })).toBe(1);
  });

  it("sends a redirect-checkout payment to the checkout", async () => {
    const source = await portalGraphql(
      s,
      cookies,
      `mutation { createSource(input: { gateway: "redirect", returnUrl: "https://acme.example/back" }) { id } }`,
    );
    const res = await portalGraphql(
      s,
      cookies,
      `mutation($i: ID!, $s: ID!) { payInvoice(invoice: $i, source: $s) { redirectUrl payment { status } } }`,
      { i: f.invoiceIds[2], s: source.body.data.createSource.id },
    );
    expect(res.body.data.payInvoice).toEqual({
      redirectUrl: expect.stringMatching(new RegExp(`^${s.url}/checkout/chk_\\w+$`)),
      payment: { status: "processing" },
    });
  });

  it("chooses the default source, which the billing run charges first, and detaches sources", async () => {
    const visa = await portalGraphql(
      s,
      cookies,
      `mutation { createSource(input: { gateway: "test", data: { token: "tok_visa" } }) { id } }`,
    );
    const visaId = visa.body.data.createSource.id;
    const set = await portalGraphql(s, cookies, `mutation($id: ID!) { setDefaultSource(id: $id) { id isDefault } }`, {
      id: f.cardId,
    });
    expect(set.body.data.setDefaultSource).toEqual({ id: f.cardId, isDefault: true });
    const { usableSourceOf } = await import("../../src/services/cycle-decision.js");
    const ctx = {
      prisma: s.database.prisma,
      auth: { organizationId: s.orgs.acme, testMode: true, userEmail: "t", apiKeyId: "" },
      now: () => new Date(),
      settings: (await import("../../src/infra/config.js")).DEFAULT_SETTINGS,
      baseUrl: s.url,
    };
    // the default, though the visa is newer
    expect(await usableSourceOf(ctx, f.customerId)).toBe(f.cardId);
    const detached = await portalGraphql(
      s,
      cookies,
      `mutation($id: ID!) { detachSource(id: $id) { id customer { id } isDefault } }`,
      {
        id: f.cardId,
      },
    );
    expect(detached.body.data.detachSource).toEqual({ id: f.cardId, customer: null, isDefault: false });
    expect(await usableSourceOf(ctx, f.customerId)).toBe(visaId);
    const listed = await portalGraphql(s, cookies, "{ portal { customer { sources { id } } } }");
    expect(listed.body.data.portal.customer.sources.map((x: { id: string }) => x.id)).not.toContain(f.cardId);
  });

  it("cancels a subscription at period end only, and only when the branding allows it", async () => {
    const now = await portalGraphql(s, cookies, `mutation($id: ID!) { cancelSubscription(id: $id) { id } }`, {
      id: f.subscriptionId,
    });
    expect(codeOf(now.body)).toBe("permission_denied");
    await s.graphql(
      `mutation { updateOrganizationBranding(input: { portalCancelSubscriptions: false }) { portalCancelSubscriptions }
        }`,
    );
    const off = await portalGraphql(
      s,
      cookies,
      `mutation($id: ID!) { cancelSubscription(id: $id, atPeriodEnd: true) { id } }`,
      {
        id: f.subscriptionId,
      },
    );
    expect(codeOf(off.body)).toBe("permission_denied");
    await s.graphql(
      `mutation { updateOrganizationBranding(input: { portalCancelSubscriptions: true }) {
        portalCancelSubscriptions } }`,
    );
    const ok = await portalGraphql(
      s,
      cookies,
      `mutation($id: ID!) { cancelSubscription(id: $id, atPeriodEnd: true) { status cancelAtPeriodEnd upcomingInvoice {
        final } } }`,
      { id: f.subscriptionId },
    );
    expect(ok.body.data.cancelSubscription).toMatchObject({ status: "active", cancelAtPeriodEnd: true });
  });
});

describe("a session that hides invoices (displayInvoices false)", () => {
  let hidden: PortalCookies;
  let noteId: string;
  beforeAll(async () => {
    // a finalized credit note of the customer (the portal shows no drafts), whose `invoice` leads to an invoice
    const note = await s.graphql(`mutation($input: CreditNoteInput!) { createCreditNote(input: $input) { id } }`, {
      input: { invoice: f.invoiceIds[2], lines: [{ name: "Devolución", amount: "100" }] },
    });
    noteId = note.body.data.createCreditNote.id;
    expect((await s.rest("GET", `/v1/creditnotes/${noteId}/finalize/`)).status).toBe(200);
    const branding = `mutation($on: Boolean!) { updateOrganizationBranding(input: { displayInvoices: $on }) {
      displayInvoices } }`;
    await s.graphql(branding, { on: false });
    // the session copies the branding when it is created: later changes leave it as it is
    hidden = await openLink(s, (await sessionKey(s, f.customerId)).key);
    await s.graphql(branding, { on: true });
  });

  it("lists no invoices and finds none by id, PDF and DTE included", async () => {
    const res = await portalGraphql(
      s,
      hidden,
      `query($id: ID!) { portal { settings { displayInvoices }
         customer { invoices { totalCount edges { node { id } } } creditNotes { totalCount }
           subscriptions { totalCount } }
         invoice(id: $id) { id pdf dte { name } } } }`,
      { id: f.invoiceIds[2] },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.portal).toEqual({
      settings: { displayInvoices: false },
      customer: {
        invoices: { totalCount: 0, edges: [] },
        creditNotes: { totalCount: 1 },
        subscriptions: { totalCount: 1 },
      },
      invoice: null,
    });
    // the same customer's session that shows invoices lists them
    const shown = await portalGraphql(s, cookies, "{ portal { customer { invoices { totalCount } } } }");
    expect(shown.body.data.portal.customer.invoices.totalCount).toBe(3);
  });

  it("refuses the invoice behind a credit note, node(id) and payInvoice, and pays nothing", async () => {
    const viaNote = await portalGraphql(
      s,
      hidden,
      `{ portal { customer { creditNotes { edges { node { id invoice { id } } } } } } }`,
    );
    expect(codeOf(viaNote.body)).toBe("permission_denied");
    expect(viaNote.body.errors[0].message).toBe(
      "This customer portal does not show invoices (the session's displayInvoices is off)",
    );
    expect(viaNote.body.errors[0].path).toEqual(["portal", "customer", "creditNotes", "edges", 0, "node", "invoice"]);
    const node = await portalGraphql(s, hidden, `query($id: ID!) { node(id: $id) { id } }`, { id: f.invoiceIds[2] });
    expect(codeOf(node.body)).toBe("permission_denied");
    expect(node.body.data.node).toBeNull();
    const before = await s.database.prisma.payment.count({ where: { invoiceId: f.invoiceIds[2] } });
    const pay = await portalGraphql(
      s,
      hidden,
      `mutation($i: ID!, $s: ID!) { payInvoice(invoice: $i, source: $s) { payment { id } } }`,
      { i: f.invoiceIds[2], s: f.cardId },
    );
    expect(codeOf(pay.body)).toBe("permission_denied");
    expect(pay.body.errors[0].message).toBe(
      "This customer portal does not show invoices (the session's displayInvoices is off)",
    );
    expect(await s.database.prisma.payment.count({ where: { invoiceId: f.invoiceIds[2] } })).toBe(before);
  });

  it("leaves an API key every invoice", async () => {
    const res = await s.graphql(
      `query($c: ID!, $n: ID!) { customer: node(id: $c) { ... on Customer { invoices { totalCount } } }
         note: node(id: $n) { ... on CreditNote { invoice { id } } } }`,
      { c: f.customerId, n: noteId },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data).toEqual({
      customer: { invoices: { totalCount: 3 } },
      note: { invoice: { id: f.invoiceIds[2] } },
    });
  });
});

describe("only issued documents (drafts are never shown to the customer)", () => {
  let drafts: { invoice: string; note: string; order: string; billing: string };
  let issued: { invoice: string; note: string; order: string };
  const ids = (conn: { edges: { node: { id: string } }[] }) => conn.edges.map((e) => e.node.id);
  beforeAll(async () => {
    const rest = async (method: string, path: string, body?: unknown) => {
      const res = await s.rest(method, path, { body });
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      return res.body;
    };
    const invoice = await finalizedInvoice(s, f.customerId);
    const draftInvoice = (
      await rest("POST", "/v1/invoices/", { customer: f.customerId, lines: [{ name: "Borrador", amount: 700 }] })
    ).id;
    const note = (await rest("POST", "/v1/creditnotes/", { invoice, lines: [{ name: "Ajuste", amount: 100 }] })).id;
    await rest("GET", `/v1/creditnotes/${note}/finalize/`);
    const draftNote = (await rest("POST", "/v1/creditnotes/", { invoice, lines: [{ name: "Nota", amount: 50 }] })).id;
    const orderLines = [{ name: "Cajas", quantity: 2, amount: 1000 }];
    const order = (await rest("POST", "/v1/orders/", { customer: f.customerId, lines: orderLines })).id;
    await rest("GET", `/v1/orders/${order}/finalize/`);
    const draftOrder = (await rest("POST", "/v1/orders/", { customer: f.customerId, lines: orderLines })).id;
    // the finalized order is billed by a draft invoice
    const billed = await s.graphql(`mutation($ids: [ID!]!) { invoiceOrders(orderIds: $ids) { id status } }`, {
      ids: [order],
    });
    expect(billed.body.data.invoiceOrders.status).toBe("draft");
    drafts = { invoice: draftInvoice, note: draftNote, order: draftOrder, billing: billed.body.data.invoiceOrders.id };
    issued = { invoice, note, order };
  });

  it("lists finalized invoices, credit notes and orders, never a draft; an API key sees both", async () => {
    const query = `{ portal { customer {
      invoices(first: 100) { totalCount edges { node { id status } } }
      creditNotes(first: 100) { totalCount edges { node { id status } } }
      orders(first: 100) { totalCount edges { node { id status } } } } } }`;
    const res = await portalGraphql(s, cookies, query);
    expect(res.body.errors).toBeUndefined();
    const { invoices, creditNotes, orders } = res.body.data.portal.customer;
    expect(ids(invoices)).toContain(issued.invoice);
    expect(ids(invoices)).not.toContain(drafts.invoice);
    expect(ids(invoices)).not.toContain(drafts.billing);
    expect(ids(creditNotes)).toContain(issued.note);
    expect(ids(creditNotes)).not.toContain(drafts.note);
    expect(ids(orders)).toContain(issued.order);
    expect(ids(orders)).not.toContain(drafts.order);
    for (const list of [invoices, creditNotes, orders]) {
      expect(list.edges.every((e: { node: { status: string } }) => e.node.status === "finalized")).toBe(true);
      expect(list.totalCount).toBe(list.edges.length);
    }
    // the same lists through an API key hold the drafts too, and count them
    const byKey = await s.graphql(
      `query($id: ID!) { node(id: $id) { ... on Customer {
        invoices(first: 100) { totalCount edges { node { id } } }
        creditNotes(first: 100) { totalCount edges { node { id } } }
        orders(first: 100) { totalCount edges { node { id } } } } } }`,
      { id: f.customerId },
    );
    const all = byKey.body.data.node;
    expect(ids(all.invoices)).toEqual(expect.arrayContaining([issued.invoice, drafts.invoice, drafts.billing]));
    expect(all.invoices.totalCount).toBe(invoices.totalCount + 2);
    expect(ids(all.creditNotes)).toEqual(expect.arrayContaining([issued.note, drafts.note]));
    expect(all.creditNotes.totalCount).toBe(creditNotes.totalCount + 1);
    expect(ids(all.orders)).toEqual(expect.arrayContaining([issued.order, drafts.order]));
    expect(all.orders.totalCount).toBe(orders.totalCount + 1);
  });

  it("reads a draft by id, with its PDF and DTE, exactly like an unknown id: null", async () => {
    // one query per kind of document: three PDFs in one query cost more than a query may (docs/limits.md)
    for (const [field, prefix, draftId, issuedId] of [
      ["invoice", "inv", drafts.invoice, issued.invoice],
      ["creditNote", "cre", drafts.note, issued.note],
      ["order", "ord", drafts.order, issued.order],
    ]) {
      const read = `query($id: ID!) { portal { ${field}(id: $id) { id status pdf dte { name } } } }`;
      const unknown = await portalGraphql(s, cookies, read, { id: `${prefix}_000000000000000000000000` });
      const draft = await portalGraphql(s, cookies, read, { id: draftId });
      expect(draft.body, field).toEqual(unknown.body);
      expect(draft.body, field).toEqual({ data: { portal: { [field]: null } } });
      const finalized = await portalGraphql(s, cookies, read, { id: issuedId });
      expect(finalized.body.errors, field).toBeUndefined();
      expect(finalized.body.data.portal[field]).toMatchObject({ id: issuedId, status: "finalized" });
      const pdf = Buffer.from(finalized.body.data.portal[field].pdf, "base64");
      expect(pdf.subarray(0, 5).toString(), field).toBe("%PDF-");
    }
    // node(id) is no portal field: a draft and an unknown id get the same refusal
    const node = (id: string) => portalGraphql(s, cookies, `query($id: ID!) { node(id: $id) { id } }`, { id });
    const [nodeDraft, nodeUnknown] = [await node(drafts.invoice), await node("inv_000000000000000000000000")];
    expect(codeOf(nodeDraft.body)).toBe("permission_denied");
    expect(nodeDraft.body).toEqual(nodeUnknown.body);
  });

  it("hides a draft behind an issued document: an invoice's credit notes, an order's invoice", async () => {
    const res = await portalGraphql(
      s,
      cookies,
      `query($i: ID!, $o: ID!) { portal { invoice(id: $i) { creditNotes { id status } }
        order(id: $o) { invoice { id } } } }`,
      { i: issued.invoice, o: issued.order },
    );
    expect(res.body).toEqual({
      data: {
        portal: { invoice: { creditNotes: [{ id: issued.note, status: "finalized" }] }, order: { invoice: null } },
      },
    });
    const byKey = await s.graphql(
      `query($i: ID!, $o: ID!) { invoice: node(id: $i) { ... on Invoice { creditNotes { id } } }
        order: node(id: $o) { ... on Order { invoice { id } } } }`,
      { i: issued.invoice, o: issued.order },
    );
    expect(byKey.body.data).toEqual({
      invoice: { creditNotes: [{ id: issued.note }, { id: drafts.note }] },
      order: { invoice: { id: drafts.billing } },
    });
  });

  it("refuses to pay a draft exactly like an unknown invoice (not_found), and pays nothing", async () => {
    const pay = `mutation($i: ID!, $s: ID!) { payInvoice(invoice: $i, source: $s) { payment { id } } }`;
    const visa = await portalGraphql(
      s,
      cookies,
      `mutation { createSource(input: { gateway: "test", data: { token: "tok_visa" } }) { id } }`,
    );
    const source = visa.body.data.createSource.id;
    const unknownId = "inv_000000000000000000000000";
    const unknown = await portalGraphql(s, cookies, pay, { i: unknownId, s: source });
    const draft = await portalGraphql(s, cookies, pay, { i: drafts.invoice, s: source });
    expect(codeOf(draft.body)).toBe("not_found");
    expect(JSON.stringify(draft.body).replaceAll(drafts.invoice, unknownId)).toBe(JSON.stringify(unknown.body));
    expect(await s.database.prisma.payment.count({ where: { invoiceId: drafts.invoice } })).toBe(0);
    // an API key is told what it is: a draft cannot be paid yet
    const byKey = await s.graphql(pay, { i: drafts.invoice, s: source });
    expect(codeOf(byKey.body)).toBe("invalid_state");
  });
});

describe("signing out", () => {
  it("deletes the credential, clears both cookies and leaves the cookie opening nothing", async () => {
    const session = await sessionKey(s, f.customerId, "https://acme.example/signed-out");
    const held = await openLink(s, session.key);
    const row = await s.database.prisma.portalCredential.findFirstOrThrow({ where: { sessionId: session.id } });
    const res = await fetch(`${s.url}/graphql`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        cookie: `portal_credential=${held.credential}; portal_csrf=${held.csrf}`,
        "x-portal-csrf": held.csrf,
      },
      body: JSON.stringify({ query: "mutation { signOutPortal { returnUrl } }" }),
    });
    expect(await res.json()).toEqual({ data: { signOutPortal: { returnUrl: "https://acme.example/signed-out" } } });
    expect(res.headers.getSetCookie()).toEqual([
      "portal_credential=; Path=/; Max-Age=0; SameSite=Strict; HttpOnly",
      "portal_csrf=; Path=/; Max-Age=0; SameSite=Strict",
    ]);
    expect(await s.database.prisma.portalCredential.findUnique({ where: { id: row.id } })).toBeNull();
    const after = await portalGraphql(s, held, "{ portal { customer { id } } }");
    expect(after.status).toBe(401);
    expect(codeOf(after.body)).toBe("authentication_required");
    // other credentials go on
    expect((await portalGraphql(s, cookies, "{ portal { customer { id } } }")).status).toBe(200);
  });

  it("is for a portal credential only", async () => {
    const res = await s.graphql("mutation { signOutPortal { returnUrl } }");
    expect(codeOf(res.body)).toBe("permission_denied");
    expect(res.body.errors[0].message).toBe("Mutation.signOutPortal needs a customer-portal credential");
  });
});

describe("expired credentials", () => {
  it("are purged when a session key is exchanged; live ones stay", async () => {
    const old = await sessionKey(s, f.other.customerId);
    await openLink(s, old.key);
    const expired = await s.database.prisma.portalCredential.findFirstOrThrow({ where: { sessionId: old.id } });
    await s.database.prisma.portalCredential.update({
      where: { id: expired.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const live = await s.database.prisma.portalCredential.count({
      where: { organizationId: s.orgs.acme, expiresAt: { gt: new Date() } },
    });
    expect(live).toBeGreaterThan(0);
    await openLink(s, (await sessionKey(s, f.customerId)).key);
    expect(await s.database.prisma.portalCredential.findUnique({ where: { id: expired.id } })).toBeNull();
    expect(
      await s.database.prisma.portalCredential.count({
        where: { organizationId: s.orgs.acme, expiresAt: { lte: new Date() } },
      }),
    ).toBe(0);
    // the live ones and the new one
    expect(
      await s.database.prisma.portalCredential.count({
        where: { organizationId: s.orgs.acme, expiresAt: { gt: new Date() } },
      }),
    ).toBe(live + 1);
    expect((await portalGraphql(s, cookies, "{ portal { customer { id } } }")).status).toBe(200);
  });
});
