/**
 * The customer portal (docs/customer-portal.md): one page over the `portal` query of /graphql.
 * Routes are in the hash: `#/` the overview, `#/invoice/<id>` one invoice and its payment form.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { client, errorMessage, headers, isExpired } from "./api.js";
import { TEXTS, formatDate, formatMoney, type Locale, type Texts } from "./i18n.js";
import { useHash } from "../../shared/route.js";

interface Currency {
  id: string;
  decimals: number;
}
interface Doc {
  id: string;
  number: number | null;
  /** sii_folio or internal (a non-tax document numbered before SII set-up); null on drafts */
  numbering: string | null;
  date: string;
  status: string;
  total: string;
  localFile: string | null;
  currency: Currency;
  document: { name: string };
}
interface InvoiceDoc extends Doc {
  dueDate: string | null;
  amountDue: string;
}
interface Source {
  id: string;
  status: string;
  usage: string;
  gateway: string;
  isDefault: boolean;
  data: { brand?: string; last4?: string };
}
interface SubscriptionNode {
  id: string;
  status: string;
  nextBilling: string;
  cancelAtPeriodEnd: boolean;
  lines: { quantity: string; plan: { name: string; currency: Currency } }[];
  upcomingInvoice: { date: string; total: string; currency: string } | null;
}
interface Edges<T> {
  edges: { node: T }[];
}
interface PortalData {
  portal: {
    locale: Locale;
    cancelSubscriptions: boolean;
    gateways: string[];
    settings: {
      businessName: string | null;
      displayInvoices: boolean;
      termsOfServiceUrl: string | null;
      privacyPolicyUrl: string | null;
      returnUrl: string;
    };
    colors: { background: string; text: string; asset: string; onAsset: string };
    customer: {
      id: string;
      name: string | null;
      email: string | null;
      address: string | null;
      sources: Source[];
      invoices: Edges<InvoiceDoc>;
      creditNotes: Edges<Doc>;
      orders: Edges<Doc>;
      subscriptions: Edges<SubscriptionNode>;
    };
  };
}

const DOC = `id number numbering date status total localFile currency { id decimals } document { name }`;

const PORTAL = gql`
  query Portal {
    portal {
      locale
      cancelSubscriptions
      gateways
      settings { businessName displayInvoices termsOfServiceUrl privacyPolicyUrl returnUrl }
      colors { background text asset onAsset }
      customer {
        id name email address
        sources { id status usage gateway isDefault data }
        invoices(first: 50) { edges { node { ${DOC} dueDate amountDue } } }
        creditNotes(first: 50) { edges { node { ${DOC} } } }
        orders(first: 50) { edges { node { ${DOC} } } }
        subscriptions(first: 50) {
          edges { node { id status nextBilling cancelAtPeriodEnd
            lines { quantity plan { name currency { id decimals } } }
            upcomingInvoice { date total currency } } }
        }
      }
    }
  }
`;

const INVOICE = gql`
  query PortalInvoice($id: ID!) {
    portal { invoice(id: $id) { ${DOC} dueDate amountDue } }
  }
`;

type Kind = "invoice" | "creditNote" | "order";

/** Saves `base64` as a file named `name`. */
function save(base64: string, name: string, type: string): void {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

async function download(kind: Kind, id: string, what: "pdf" | "dte"): Promise<void> {
  const selection = what === "pdf" ? "pdf" : "dte { name content }";
  const result = await client
    .query(`query PortalFile($id: ID!) { portal { ${kind}(id: $id) { id ${selection} } } }`, { id })
    .toPromise();
  const doc = (
    result.data as { portal: Record<Kind, { pdf?: string; dte?: { name: string; content: string } } | null> }
  )?.portal[kind];
  if (!doc) return;
  if (what === "pdf" && doc.pdf) save(doc.pdf, `${id}.pdf`, "application/pdf");
  if (what === "dte" && doc.dte) save(doc.dte.content, doc.dte.name, "application/xml");
}

/** The document's name as its PDF prints it: a document of the internal series is a non-tax document. */
function docLabel(doc: Doc, t: Texts): string {
  if (doc.numbering === "internal") return t.nonTaxDocument(doc.number ?? doc.id);
  return `${doc.document.name} ${doc.number ?? doc.id}`;
}

function money(locale: Locale, value: string, currency: Currency): string {
  return formatMoney(value, currency.id, currency.decimals, locale);
}

/** Paid or open: the API gives the portal issued documents only, never a draft (docs/customer-portal.md). */
function invoiceStatus(t: Texts, doc: InvoiceDoc): string {
  // nothing due: the amount is made of zeros only (compared as text, never as a float)
  return /^[0.]*$/.test(doc.amountDue) ? t.paid : t.open;
}

function Downloads({ t, kind, doc }: { t: Texts; kind: Kind; doc: Doc }) {
  return (
    <span class="actions">
      <button
        type="button"
        class="link"
        aria-label={t.downloadPdf(docLabel(doc, t))}
        onClick={() => download(kind, doc.id, "pdf")}
      >
        {t.pdf}
      </button>
      {doc.localFile && (
        <button
          type="button"
          class="link"
          aria-label={t.downloadXml(docLabel(doc, t))}
          onClick={() => download(kind, doc.id, "dte")}
        >
          {t.xml}
        </button>
      )}
    </span>
  );
}

function Documents({
  t,
  locale,
  kind,
  docs,
  title,
}: {
  t: Texts;
  locale: Locale;
  kind: Kind;
  docs: Doc[];
  title: string;
}) {
  const invoices = kind === "invoice";
  return (
    <section aria-labelledby={`${kind}-title`}>
      <h2 id={`${kind}-title`}>{title}</h2>
      {docs.length === 0 ? (
        <p>{t.none}</p>
      ) : (
        <div class="table">
          <table>
            <thead>
              <tr>
                <th scope="col">{t.document}</th>
                <th scope="col">{t.date}</th>
                {invoices && <th scope="col">{t.dueDate}</th>}
                <th scope="col">{t.status}</th>
                <th scope="col" class="num">
                  {t.total}
                </th>
                {invoices && (
                  <th scope="col" class="num">
                    {t.amountDue}
                  </th>
                )}
                <th scope="col">{t.actions}</th>
              </tr>
            </thead>
            <tbody>
              {docs.map((doc) => {
                const invoice = doc as InvoiceDoc;
                const due = invoices && invoice.status === "finalized" && invoiceStatus(t, invoice) === t.open;
                return (
                  <tr key={doc.id} data-id={doc.id}>
                    <th scope="row">{docLabel(doc, t)}</th>
                    <td data-label={t.date} class="date">
                      {formatDate(doc.date, locale)}
                    </td>
                    {invoices && (
                      <td data-label={t.dueDate} class="date">
                        {formatDate(invoice.dueDate, locale)}
                      </td>
                    )}
                    <td data-label={t.status} class="status">
                      {invoices ? invoiceStatus(t, invoice) : t.finalized}
                    </td>
                    <td data-label={t.total} class="num">
                      {money(locale, doc.total, doc.currency)}
                    </td>
                    {invoices && (
                      <td data-label={t.amountDue} class="num">
                        {money(locale, invoice.amountDue, doc.currency)}
                      </td>
                    )}
                    <td class="row-actions">
                      <Downloads t={t} kind={kind} doc={doc} />
                      {due && (
                        <a
                          class="button small"
                          href={`#/invoice/${doc.id}`}
                          aria-label={t.payInvoice(docLabel(doc, t))}
                        >
                          {t.pay}
                        </a>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/**
 * The invoices a dunning e-mail's link names (`#/pay/<id>,<id>`), those among the customer's latest 50 that still
 * have something due, each with its pay button; a link to the whole portal below.
 */
function ToPay({ t, locale, ids, invoices }: { t: Texts; locale: Locale; ids: string[]; invoices: InvoiceDoc[] }) {
  // in the link's order (the e-mail's: oldest due date first)
  const due = ids
    .map((id) => invoices.find((i) => i.id === id))
    .filter((i): i is InvoiceDoc => !!i && invoiceStatus(t, i) === t.open);
  return (
    <>
      <p>{due.length ? t.toPayIntro : t.allPaid}</p>
      {due.length > 0 && <Documents t={t} locale={locale} kind="invoice" title={t.toPay} docs={due} />}
      <p>
        <a href="#/">{t.allDocuments}</a>
      </p>
    </>
  );
}

function cardLabel(t: Texts, source: Source): string {
  const brand = source.data.brand ?? source.gateway;
  return t.card(brand.charAt(0).toUpperCase() + brand.slice(1), source.data.last4 ?? "????");
}

const usable = (s: Source) => s.usage === "reusable" && s.status === "chargeable";

function PaymentMethods({
  t,
  sources,
  gateways,
  refresh,
}: {
  t: Texts;
  sources: Source[];
  gateways: string[];
  refresh: () => void;
}) {
  const [token, setToken] = useState("tok_visa");
  const [error, setError] = useState<string | null>(null);
  const cards = sources.filter(usable);
  async function run(query: string, variables: Record<string, unknown>) {
    setError(null);
    const result = await client.mutation(query, variables).toPromise();
    if (result.error) setError(errorMessage(result.error));
    refresh();
  }
  return (
    <section aria-labelledby="methods-title">
      <h2 id="methods-title">{t.paymentMethods}</h2>
      {cards.length === 0 ? (
        <p>{t.noCards}</p>
      ) : (
        <ul class="cards">
          {cards.map((s) => (
            <li key={s.id} data-id={s.id}>
              <span>{cardLabel(t, s)}</span>
              {s.isDefault ? (
                <span class="badge">{t.default}</span>
              ) : (
                <button
                  type="button"
                  class="link"
                  onClick={() => run("mutation($id: ID!) { setDefaultSource(id: $id) { id } }", { id: s.id })}
                >
                  {t.makeDefault}
                </button>
              )}
              <button
                type="button"
                class="link"
                aria-label={`${t.remove}: ${cardLabel(t, s)}`}
                onClick={() => run("mutation($id: ID!) { detachSource(id: $id) { id } }", { id: s.id })}
              >
                {t.remove}
              </button>
            </li>
          ))}
        </ul>
      )}
      {gateways.includes("test") && (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void run("mutation($input: SourceInput!) { createSource(input: $input) { id } }", {
              input: { gateway: "test", data: { token } },
            });
          }}
        >
          <label for="new-card-token">{t.cardToken}</label>
          <input id="new-card-token" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
          <button type="submit">{t.addCard}</button>
        </form>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </section>
  );
}

function Subscriptions({
  t,
  locale,
  subscriptions,
  canCancel,
  refresh,
}: {
  t: Texts;
  locale: Locale;
  subscriptions: SubscriptionNode[];
  canCancel: boolean;
  refresh: () => void;
}) {
  const [error, setError] = useState<string | null>(null);
  async function cancel(id: string) {
    setError(null);
    const result = await client
      .mutation("mutation($id: ID!) { cancelSubscription(id: $id, atPeriodEnd: true) { id cancelAtPeriodEnd } }", {
        id,
      })
      .toPromise();
    if (result.error) setError(errorMessage(result.error));
    refresh();
  }
  return (
    <section aria-labelledby="subscriptions-title">
      <h2 id="subscriptions-title">{t.subscriptions}</h2>
      {subscriptions.length === 0 ? (
        <p>{t.none}</p>
      ) : (
        <ul class="subscriptions">
          {subscriptions.map((s) => {
            const currency = s.lines[0]?.plan.currency ?? { id: s.upcomingInvoice?.currency ?? "", decimals: 0 };
            return (
              <li key={s.id} data-id={s.id}>
                <h3>{s.lines.map((l) => l.plan.name).join(", ") || s.id}</h3>
                <dl>
                  <dt>{t.status}</dt>
                  <dd class="status">{t.subscriptionStatus[s.status] ?? s.status}</dd>
                  {s.status !== "cancelled" && (
                    <>
                      <dt>{t.nextBilling}</dt>
                      <dd>{formatDate(s.nextBilling, locale)}</dd>
                    </>
                  )}
                  {s.upcomingInvoice && (
                    <>
                      <dt>{t.upcoming}</dt>
                      <dd>
                        {formatDate(s.upcomingInvoice.date, locale)}:{" "}
                        {formatMoney(s.upcomingInvoice.total, s.upcomingInvoice.currency, currency.decimals, locale)}
                      </dd>
                    </>
                  )}
                </dl>
                {s.cancelAtPeriodEnd ? (
                  <p class="notice">{t.endsOn(formatDate(s.nextBilling, locale))}</p>
                ) : (
                  canCancel &&
                  (s.status === "active" || s.status === "past_due") && (
                    <button type="button" class="secondary" onClick={() => cancel(s.id)}>
                      {t.cancelAtPeriodEnd}
                    </button>
                  )
                )}
              </li>
            );
          })}
        </ul>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </section>
  );
}

function BillingDetails({
  t,
  customer,
  refresh,
}: {
  t: Texts;
  customer: PortalData["portal"]["customer"];
  refresh: () => void;
}) {
  const [email, setEmail] = useState(customer.email ?? "");
  const [address, setAddress] = useState(customer.address ?? "");
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  return (
    <section aria-labelledby="billing-title">
      <h2 id="billing-title">{t.billingDetails}</h2>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          const result = await client
            .mutation(
              "mutation($id: ID!, $input: CustomerInput!) { updateCustomer(id: $id, input: $input) { id email " +
                "address } }",
              {
                id: customer.id,
                input: { email, address },
              },
            )
            .toPromise();
          setMessage(result.error ? { ok: false, text: errorMessage(result.error) } : { ok: true, text: t.saved });
          if (!result.error) refresh();
        }}
      >
        <label for="billing-email">{t.email}</label>
        <input
          id="billing-email"
          type="email"
          autocomplete="email"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <label for="billing-address">{t.address}</label>
        <textarea
          id="billing-address"
          rows={3}
          autocomplete="street-address"
          value={address}
          onInput={(e) => setAddress(e.currentTarget.value)}
        />
        <div>
          <button type="submit">{t.save}</button>
        </div>
        {message && (
          <p role={message.ok ? "status" : "alert"} class={message.ok ? "success" : "error"}>
            {message.text}
          </p>
        )}
      </form>
    </section>
  );
}

/**
 * The outcome the redirect checkout reports when it sends the customer back (`?payment=<id>&status=<status>` before
 * the hash): paid, or not completed. The invoice shown beside it is read from the API, never from the address.
 */
function checkoutOutcome(t: Texts): { ok: boolean; text: string } | null {
  const params = new URLSearchParams(location.search);
  if (!params.get("payment")) return null;
  return params.get("status") === "succeeded"
    ? { ok: true, text: t.paymentSucceeded }
    : { ok: false, text: t.checkoutRejected };
}

function PayInvoice({
  t,
  locale,
  id,
  sources,
  gateways,
  refresh,
}: {
  t: Texts;
  locale: Locale;
  id: string;
  sources: Source[];
  gateways: string[];
  refresh: () => void;
}) {
  const [{ data, fetching }, reload] = useQuery<{ portal: { invoice: InvoiceDoc | null } }>({
    query: INVOICE,
    variables: { id },
  });
  const cards = sources.filter(usable);
  const [method, setMethod] = useState<string>(cards.find((c) => c.isDefault)?.id ?? cards[0]?.id ?? "new");
  const [token, setToken] = useState("tok_visa");
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(() => checkoutOutcome(t));
  useEffect(() => {
    // the checkout's answer is shown once: a reload shows the invoice as it is
    if (location.search) history.replaceState(null, "", `/portal/${location.hash}`);
  }, []);
  // one key per payment attempt: a retried request (network failure) is answered once
  const [attempt, setAttempt] = useState(() => crypto.randomUUID());
  if (fetching && !data) return <p>{t.loading}</p>;
  const invoice = data?.portal.invoice;
  if (!invoice)
    return (
      <section>
        <p role="alert" class="error">
          {t.notFound}
        </p>
        <a href="#/">{t.backToList}</a>
      </section>
    );
  const dueText = formatMoney(invoice.amountDue, invoice.currency.id, invoice.currency.decimals, locale);
  const payable = invoice.status === "finalized" && invoiceStatus(t, invoice) === t.open;

  async function pay(e: Event) {
    e.preventDefault();
    setBusy(true);
    setOutcome(null);
    let source = method;
    if (method === "new" || method === "checkout") {
      const input =
        method === "new"
          ? { gateway: "test", data: { token } }
          : { gateway: "redirect", returnUrl: `${location.origin}/portal/#/invoice/${invoice!.id}` };
      const created = await client
        .mutation("mutation($input: SourceInput!) { createSource(input: $input) { id } }", { input })
        .toPromise();
      if (created.error || !created.data) {
        setBusy(false);
        setOutcome({ ok: false, text: created.error ? errorMessage(created.error) : t.error });
        return;
      }
      source = (created.data as { createSource: { id: string } }).createSource.id;
    }
    const result = await client
      .mutation(
        "mutation($invoice: ID!, $source: ID!) { payInvoice(invoice: $invoice, source: $source) { redirectUrl " +
          "payment { id status failureReason } } }",
        { invoice: invoice!.id, source },
        {
          fetchOptions: { credentials: "same-origin", headers: headers({ "Idempotency-Key": `${attempt}-${source}` }) },
        },
      )
      .toPromise();
    setAttempt(crypto.randomUUID());
    setBusy(false);
    if (result.error || !result.data) {
      setOutcome({ ok: false, text: result.error ? errorMessage(result.error) : t.error });
      return;
    }
    const answer = (
      result.data as {
        payInvoice: { redirectUrl: string | null; payment: { status: string; failureReason: string | null } };
      }
    ).payInvoice;
    if (answer.redirectUrl) {
      location.assign(answer.redirectUrl);
      return;
    }
    if (answer.payment.status === "succeeded") setOutcome({ ok: true, text: t.paymentSucceeded });
    else setOutcome({ ok: false, text: t.paymentFailed(answer.payment.failureReason ?? answer.payment.status) });
    reload({ requestPolicy: "network-only" });
    refresh();
  }

  return (
    <section aria-labelledby="pay-title">
      <p>
        <a href="#/">{t.backToList}</a>
      </p>
      <h2 id="pay-title">{docLabel(invoice, t)}</h2>
      <dl class="summary">
        <dt>{t.date}</dt>
        <dd>{formatDate(invoice.date, locale)}</dd>
        <dt>{t.dueDate}</dt>
        <dd>{formatDate(invoice.dueDate, locale)}</dd>
        <dt>{t.total}</dt>
        <dd>{formatMoney(invoice.total, invoice.currency.id, invoice.currency.decimals, locale)}</dd>
        <dt>{t.amountDue}</dt>
        <dd class="due">{dueText}</dd>
        <dt>{t.status}</dt>
        <dd class="status">{invoiceStatus(t, invoice)}</dd>
      </dl>
      <Downloads t={t} kind="invoice" doc={invoice} />
      {payable && (
        <form class="stack" onSubmit={pay}>
          <fieldset>
            <legend>{t.payWith}</legend>
            {cards.map((c) => (
              <label key={c.id} class="choice">
                <input
                  type="radio"
                  name="method"
                  value={c.id}
                  checked={method === c.id}
                  onChange={() => setMethod(c.id)}
                />
                {cardLabel(t, c)}
                {c.isDefault && <span class="badge">{t.default}</span>}
              </label>
            ))}
            {gateways.includes("test") && (
              <label class="choice">
                <input
                  type="radio"
                  name="method"
                  value="new"
                  checked={method === "new"}
                  onChange={() => setMethod("new")}
                />
                {t.newCard}
              </label>
            )}
            {gateways.includes("redirect") && (
              <label class="choice">
                <input
                  type="radio"
                  name="method"
                  value="checkout"
                  checked={method === "checkout"}
                  onChange={() => setMethod("checkout")}
                />
                {t.checkout}
              </label>
            )}
          </fieldset>
          {method === "new" && (
            <>
              <label for="pay-card-token">{t.cardToken}</label>
              <input id="pay-card-token" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
            </>
          )}
          <div>
            <button type="submit" disabled={busy}>
              {busy ? t.paying : t.payAmount(dueText)}
            </button>
          </div>
        </form>
      )}
      {outcome && (
        <p role={outcome.ok ? "status" : "alert"} class={outcome.ok ? "success" : "error"}>
          {outcome.text}
        </p>
      )}
    </section>
  );
}

/**
 * The page of a credential that opens nothing: "this link has expired", or, after the customer signed out (`signedOut`,
 * in the language they were reading), "signed out"; both link back to the business when its address is known. The
 * heading takes the focus, so a screen reader announces where the customer is.
 */
export function Expired({
  returnUrl,
  signedOut = false,
  locale: given,
}: {
  returnUrl: string | null;
  signedOut?: boolean;
  locale?: Locale;
}) {
  const locale: Locale =
    given ??
    (localStorage.getItem("portal-locale") as Locale | null) ??
    (navigator.language.startsWith("es") ? "es" : "en");
  const t = TEXTS[locale];
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.documentElement.lang = locale;
    document.title = signedOut ? t.signedOutTitle : t.expiredTitle;
    heading.current?.focus();
  }, [locale, signedOut, t]);
  return (
    <main class="expired">
      <h1 ref={heading} tabIndex={-1}>
        {signedOut ? t.signedOutTitle : t.expiredTitle}
      </h1>
      <p>{signedOut ? t.signedOutText : t.expiredText}</p>
      {returnUrl && (
        <p>
          <a href={returnUrl}>{t.goBack}</a>
        </p>
      )}
    </main>
  );
}

export function App() {
  const [{ data, error, fetching }, refetch] = useQuery<PortalData>({ query: PORTAL });
  const [override, setOverride] = useState<Locale | null>(() => localStorage.getItem("portal-locale") as Locale | null);
  const [lastReturn, setLastReturn] = useState<string | null>(null);
  const [signedOut, setSignedOut] = useState(false);
  const [signOutError, setSignOutError] = useState(false);
  const route = useHash();
  const portal = data?.portal;
  const locale: Locale = override ?? portal?.locale ?? "es";
  const t = TEXTS[locale];
  // a layout effect: the document's language changes in the same task as the text, never after it
  useLayoutEffect(() => {
    document.documentElement.lang = locale;
  }, [locale]);
  useEffect(() => {
    if (!portal) return;
    const style = document.documentElement.style;
    style.setProperty("--bg", portal.colors.background);
    style.setProperty("--text", portal.colors.text);
    style.setProperty("--asset", portal.colors.asset);
    style.setProperty("--on-asset", portal.colors.onAsset);
    setLastReturn(portal.settings.returnUrl);
    document.title = t.title(portal.settings.businessName ?? "");
  }, [portal, t]);
  const refresh = () => refetch({ requestPolicy: "network-only" });

  if (signedOut) return <Expired returnUrl={lastReturn} signedOut locale={locale} />;
  if (isExpired(error)) return <Expired returnUrl={lastReturn} />;
  if (!portal)
    return <main>{fetching ? <p>{t.loading}</p> : <p role="alert">{error ? errorMessage(error) : t.error}</p>}</main>;
  const name = portal.settings.businessName ?? "";
  const customer = portal.customer;
  const invoiceId = /^#\/invoice\/([A-Za-z0-9_]+)$/.exec(route)?.[1];
  // a dunning e-mail's pay link: the overdue invoices it names (docs/dunning.md "The e-mail")
  const toPay = /^#\/pay\/([A-Za-z0-9_,]+)$/.exec(route)?.[1]?.split(",");
  // ends the credential (the service deletes it and clears the cookies); a credential already gone is signed out too
  const signOut = async () => {
    setSignOutError(false);
    const result = await client.mutation("mutation { signOutPortal { returnUrl } }", {}).toPromise();
    if (result.error && !isExpired(result.error)) {
      setSignOutError(true);
      return;
    }
    setSignedOut(true);
  };
  const switchLocale = () => {
    const next: Locale = locale === "es" ? "en" : "es";
    localStorage.setItem("portal-locale", next);
    setOverride(next);
  };
  return (
    <>
      <header>
        <div class="bar">
          <a class="return" href={portal.settings.returnUrl}>
            ← {t.returnTo(name)}
          </a>
          <span class="bar-actions">
            <button
              type="button"
              class="link"
              onClick={switchLocale}
              lang={locale === "es" ? "en" : "es"}
              aria-label={`${t.language}: ${t.switchTo}`}
            >
              {t.switchTo}
            </button>
            <button type="button" class="link" onClick={() => void signOut()}>
              {t.signOut}
            </button>
          </span>
        </div>
        {signOutError && (
          <p role="alert" class="error">
            {t.signOutFailed}
          </p>
        )}
        <h1>{name}</h1>
        {customer.name && <p class="customer">{customer.name}</p>}
      </header>
      <main>
        {invoiceId ? (
          <PayInvoice
            t={t}
            locale={locale}
            id={invoiceId}
            sources={customer.sources}
            gateways={portal.gateways}
            refresh={refresh}
          />
        ) : toPay ? (
          <ToPay t={t} locale={locale} ids={toPay} invoices={customer.invoices.edges.map((e) => e.node)} />
        ) : (
          <>
            {portal.settings.displayInvoices && (
              <Documents
                t={t}
                locale={locale}
                kind="invoice"
                title={t.invoices}
                docs={customer.invoices.edges.map((e) => e.node)}
              />
            )}
            <Documents
              t={t}
              locale={locale}
              kind="creditNote"
              title={t.creditNotes}
              docs={customer.creditNotes.edges.map((e) => e.node)}
            />
            <Documents
              t={t}
              locale={locale}
              kind="order"
              title={t.orders}
              docs={customer.orders.edges.map((e) => e.node)}
            />
            <Subscriptions
              t={t}
              locale={locale}
              subscriptions={customer.subscriptions.edges.map((e) => e.node)}
              canCancel={portal.cancelSubscriptions}
              refresh={refresh}
            />
            <PaymentMethods t={t} sources={customer.sources} gateways={portal.gateways} refresh={refresh} />
            <BillingDetails t={t} customer={customer} refresh={refresh} />
          </>
        )}
      </main>
      <footer>
        {portal.settings.termsOfServiceUrl && <a href={portal.settings.termsOfServiceUrl}>{t.terms}</a>}
        {portal.settings.privacyPolicyUrl && <a href={portal.settings.privacyPolicyUrl}>{t.privacy}</a>}
      </footer>
    </>
  );
}
