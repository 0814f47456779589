/**
 * Customers: the list, searched by name, RUT or e-mail (three filtered reads in one request, merged), and a
 * customer's page with its documents, subscriptions, payments and payment methods, and (for members who may write)
 * an action creating a customer-portal link (`createCustomerSession`).
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { client, errorMessage } from "./api.js";
import {
  DateText,
  docLabel,
  Message,
  Money,
  nodes,
  PaymentAmount,
  Pending,
  Section,
  Table,
  usePage,
  type Currency,
  type Edges,
} from "./ui.js";

interface CustomerRow {
  id: string;
  name: string | null;
  taxId: string | null;
  email: string | null;
}

const ROW = "id name taxId email";
const LIST = gql`
  query DashboardCustomers { customers(first: 50) { edges { node { ${ROW} } } } }
`;
const SEARCH = gql`
  query DashboardCustomerSearch($q: String!, $rut: String!) {
    byName: customers(first: 50, where: { name: { icontains: $q } }) { edges { node { ${ROW} } } }
    byTaxId: customers(first: 50, where: { taxId: { icontains: $rut } }) { edges { node { ${ROW} } } }
    byEmail: customers(first: 50, where: { email: { icontains: $q } }) { edges { node { ${ROW} } } }
  }
`;

export function Customers() {
  const { t } = usePage();
  const [text, setText] = useState("");
  const [q, setQ] = useState("");
  const [{ data, error, fetching }] = useQuery<Record<string, Edges<CustomerRow>>>(
    // RUTs are stored without dots (76042235-5): a RUT typed with them is searched without
    q ? { query: SEARCH, variables: { q, rut: q.replace(/\./g, "") } } : { query: LIST },
  );
  const seen = new Set<string>();
  const rows = Object.values(data ?? {})
    .flatMap(nodes)
    .filter((c) => !seen.has(c.id) && !!seen.add(c.id));
  return (
    <>
      <h1>{t.customers}</h1>
      <form
        class="inline"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(text.trim());
        }}
      >
        <label for="customer-search">{t.search}</label>
        <input id="customer-search" type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <button type="submit">{t.searchButton}</button>
      </form>
      {error && <Message ok={false} text={errorMessage(error)} />}
      {!data && fetching ? (
        <p>{t.loading}</p>
      ) : (
        <Table
          name="customers"
          columns={[{ label: t.name }, { label: t.taxId }, { label: t.email }]}
          empty={t.noCustomers}
          rows={rows.map((c) => (
            <tr key={c.id} data-id={c.id}>
              <th scope="row">
                <a href={`#/customers/${c.id}`}>{c.name ?? c.id}</a>
              </th>
              <td data-label={t.taxId}>{c.taxId ?? "—"}</td>
              <td data-label={t.email}>{c.email ?? "—"}</td>
            </tr>
          ))}
        />
      )}
    </>
  );
}

interface Doc {
  id: string;
  number: number | null;
  numbering: string | null;
  date: string;
  status: string;
  total: string;
  currency: Currency;
  document: { name: string };
}
interface CustomerPage extends CustomerRow {
  address: string | null;
  invoices: Edges<Doc & { amountDue: string; paymentStatus: string }>;
  creditNotes: Edges<Doc>;
  orders: Edges<Doc>;
  subscriptions: Edges<{
    id: string;
    status: string;
    nextBilling: string;
    lines: { quantity: string; plan: { name: string } }[];
  }>;
  sources: { id: string; gateway: string; status: string; isDefault: boolean; data: Record<string, string> }[];
}

const DOC = "id number numbering date status total currency { id decimals } document { name }";
const CUSTOMER = gql`
  query DashboardCustomer($id: ID!, $customer: String!) {
    node(id: $id) {
      ... on Customer {
        ${ROW} address
        invoices(first: 20) { edges { node { ${DOC} amountDue paymentStatus } } }
        creditNotes(first: 20) { edges { node { ${DOC} } } }
        orders(first: 20) { edges { node { ${DOC} } } }
        subscriptions(first: 20) { edges { node { id status nextBilling lines { quantity plan { name } } } } }
        sources { id gateway status isDefault data }
      }
    }
    payments(first: 20, where: { customer: { equals: $customer } }) {
      edges { node { id date amount currency status failureReason invoice { id currency { id decimals } } } }
    }
  }
`;

/** A list of documents: name (linked for invoices), date, status, total; `more` below it. */
function Docs({
  id,
  title,
  docs,
  link,
  more,
}: {
  id: string;
  title: string;
  docs: Doc[];
  link?: string;
  more?: ComponentChildren;
}) {
  const { t } = usePage();
  return (
    <Section id={id} title={title}>
      <Table
        columns={[{ label: t.document }, { label: t.date }, { label: t.status }, { label: t.total, num: true }]}
        rows={docs.map((d) => (
          <tr key={d.id} data-id={d.id}>
            <th scope="row">{link ? <a href={`${link}${d.id}`}>{docLabel(t, d)}</a> : docLabel(t, d)}</th>
            <td data-label={t.date} class="date">
              <DateText value={d.date} />
            </td>
            <td data-label={t.status}>{t.docStatus[d.status] ?? d.status}</td>
            <td data-label={t.total} class="num">
              <Money value={d.total} currency={d.currency} />
            </td>
          </tr>
        ))}
      />
      {more}
    </Section>
  );
}

/** Creates a customer-portal session (with the address its back link returns to) and shows its link once. */
function PortalLink({ customer }: { customer: string }) {
  const { t } = usePage();
  const [returnUrl, setReturnUrl] = useState("");
  const [answer, setAnswer] = useState<{ ok: boolean; text: string } | null>(null);
  async function create() {
    const result = await client
      .mutation("mutation($input: CustomerSessionInput!) { createCustomerSession(input: $input) { id url } }", {
        input: { customer, returnUrl },
      })
      .toPromise();
    const url = (result.data as { createCustomerSession?: { url: string | null } } | undefined)?.createCustomerSession
      ?.url;
    setAnswer(url ? { ok: true, text: url } : { ok: false, text: result.error ? errorMessage(result.error) : t.error });
  }
  return (
    <div class="portal-link">
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <label for="portal-return-url">{t.returnUrl}</label>
        <input
          id="portal-return-url"
          type="url"
          required
          value={returnUrl}
          onInput={(e) => setReturnUrl(e.currentTarget.value)}
        />
        <button type="submit">{t.portalLink}</button>
      </form>
      {answer &&
        (answer.ok ? (
          <p role="status">
            {t.portalLinkText} <output class="link-url">{answer.text}</output>
          </p>
        ) : (
          <Message ok={false} text={answer.text} />
        ))}
    </div>
  );
}

export function Customer({ id }: { id: string }) {
  const { t, canWrite } = usePage();
  const [{ data, error, fetching }] = useQuery<{
    node: CustomerPage | null;
    payments: Edges<{
      id: string;
      date: string;
      amount: string;
      currency: string;
      status: string;
      failureReason: string | null;
      invoice: { id: string; currency: Currency } | null;
    }>;
  }>({ query: CUSTOMER, variables: { id, customer: id } });
  if (!data) return <Pending fetching={fetching} error={error} />;
  const c = data.node;
  if (!c || !("invoices" in c)) return <Message ok={false} text={t.notFound} />;
  return (
    <>
      <p>
        <a href="#/customers">← {t.customers}</a>
      </p>
      <h1>{c.name ?? c.id}</h1>
      <dl class="summary">
        <dt>{t.taxId}</dt>
        <dd>{c.taxId ?? "—"}</dd>
        <dt>{t.email}</dt>
        <dd>{c.email ?? "—"}</dd>
      </dl>
      {canWrite && <PortalLink customer={c.id} />}
      <Docs
        id="invoices"
        title={t.invoices}
        docs={nodes(c.invoices)}
        link="#/invoices/"
        more={
          <p>
            <a href={`#/invoices?customer=${c.id}`}>{t.customerInvoices}</a>
          </p>
        }
      />
      <Docs id="credit-notes" title={t.creditNotes} docs={nodes(c.creditNotes)} link="#/creditnotes/" />
      <Docs id="orders" title={t.orders} docs={nodes(c.orders)} link="#/orders/" />
      <Section id="subscriptions" title={t.subscriptions}>
        {nodes(c.subscriptions).length === 0 ? (
          <p>{t.none}</p>
        ) : (
          <ul>
            {nodes(c.subscriptions).map((s) => (
              <li key={s.id} data-id={s.id}>
                <a href={`#/subscriptions/${s.id}`}>{s.lines.map((l) => l.plan.name).join(", ")}</a> ·{" "}
                {t.subscriptionStatus[s.status] ?? s.status} · {t.nextBilling} <DateText value={s.nextBilling} />
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section id="payments" title={t.payments}>
        {nodes(data.payments).length === 0 ? (
          <p>{t.none}</p>
        ) : (
          <ul>
            {nodes(data.payments).map((p) => (
              <li key={p.id} data-id={p.id}>
                <DateText value={p.date} /> · <PaymentAmount payment={p} /> · {t.paymentState[p.status] ?? p.status}
                {p.failureReason && ` · ${p.failureReason}`}
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section id="sources" title={t.sources}>
        {c.sources.length === 0 ? (
          <p>{t.none}</p>
        ) : (
          <ul>
            {c.sources.map((s) => (
              <li key={s.id} data-id={s.id}>
                {s.data.brand ?? s.gateway} {s.data.last4 ? `···· ${s.data.last4}` : ""} · {s.status}
                {s.isDefault && ` · ${t.default}`}
              </li>
            ))}
          </ul>
        )}
      </Section>
    </>
  );
}
