/**
 * Invoices: the list with its filters (status, date range, customer; kept in the address, so a customer's page can
 * link to its invoices), and an invoice's page with its lines, totals, payments, SII status, the PDF shown in the
 * page, and the actions its state allows to members who may write (a draft: finalize; a finalized invoice's actions
 * and the history are in invoice-actions.tsx, loaded on demand).
 */
import { useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { client, errorMessage } from "./api.js";
import {
  DateText,
  docLabel,
  lazy,
  LinesTable,
  Message,
  Money,
  nodes,
  Pdf,
  Pending,
  Section,
  Table,
  Totals,
  usePage,
  type Currency,
  type Edges,
} from "./ui.js";

interface InvoiceRow {
  id: string;
  number: number | null;
  numbering: string | null;
  document: { name: string };
  date: string;
  dueDate: string | null;
  status: string;
  paymentStatus: string;
  total: string;
  amountDue: string;
  currency: Currency;
  customer: { id: string; name: string | null };
}

const ROW =
  "id number numbering document { name } date dueDate status paymentStatus total amountDue currency { id decimals } " +
  "customer { id name }";
const LIST = gql`
  query DashboardInvoices($where: InvoiceWhere, $after: String) {
    invoices(first: 50, after: $after, where: $where) {
      edges { node { ${ROW} } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

/** The list's filters from the route's query (`status`, `from`, `to`, `customer`) as an InvoiceWhere. */
function where(query: URLSearchParams): Record<string, unknown> {
  const w: Record<string, unknown> = {};
  const status = query.get("status");
  if (status === "draft" || status === "finalized") w.status = { equals: status };
  const from = query.get("from");
  const to = query.get("to");
  if (from || to) w.date = { ...(from ? { gte: from } : {}), ...(to ? { lte: to } : {}) };
  const customer = query.get("customer");
  if (customer) w.customer = { equals: customer };
  return w;
}

/** The filters' form, filled from the address; submitting it puts them in the address (the list follows). */
function Filters({ query }: { query: URLSearchParams }) {
  const { t } = usePage();
  const [values, setValues] = useState(() =>
    Object.fromEntries(["status", "from", "to", "customer"].map((name) => [name, query.get(name) ?? ""])),
  );
  const field = (name: string) => ({
    name,
    value: values[name],
    onInput: (e: Event) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).value }),
  });
  return (
    <form
      class="filters"
      onSubmit={(e) => {
        e.preventDefault();
        const params = new URLSearchParams();
        for (const [name, value] of Object.entries(values)) if (value.trim()) params.set(name, value.trim());
        const search = params.toString();
        location.hash = `#/invoices${search ? `?${search}` : ""}`;
      }}
    >
      <label>
        {t.status}
        <select {...field("status")}>
          <option value="">{t.all}</option>
          <option value="draft">{t.docStatus.draft}</option>
          <option value="finalized">{t.docStatus.finalized}</option>
        </select>
      </label>
      <label>
        {t.from}
        <input type="date" {...field("from")} />
      </label>
      <label>
        {t.to}
        <input type="date" {...field("to")} />
      </label>
      <label>
        {t.customerId}
        <input {...field("customer")} />
      </label>
      <button type="submit">{t.filter}</button>
    </form>
  );
}

export function Invoices({ query }: { query: URLSearchParams }) {
  const { t } = usePage();
  // the route keys this component by its filters: another filter starts from the first page
  const [after, setAfter] = useState<string | null>(null);
  const [shown, setShown] = useState<InvoiceRow[]>([]);
  const filter = where(query);
  const [{ data, error, fetching }] = useQuery<{
    invoices: Edges<InvoiceRow> & { pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  }>({ query: LIST, variables: { where: filter, after } });
  const rows = [...shown, ...nodes(data?.invoices)];
  return (
    <>
      <h1>{t.invoices}</h1>
      <Filters query={query} />
      {error && <Message ok={false} text={errorMessage(error)} />}
      {!data && fetching ? (
        <p>{t.loading}</p>
      ) : (
        <Table
          name="invoices"
          empty={t.noInvoices}
          columns={[
            { label: t.document },
            { label: t.customer },
            { label: t.date },
            { label: t.status },
            { label: t.paymentStatus },
            { label: t.total, num: true },
            { label: t.amountDue, num: true },
          ]}
          rows={rows.map((i) => (
            <tr key={i.id} data-id={i.id}>
              <th scope="row">
                <a href={`#/invoices/${i.id}`}>{docLabel(t, i)}</a>
              </th>
              <td data-label={t.customer}>{i.customer.name ?? i.customer.id}</td>
              <td data-label={t.date} class="date">
                <DateText value={i.date} />
              </td>
              <td data-label={t.status} class="status">
                {t.docStatus[i.status] ?? i.status}
              </td>
              <td data-label={t.paymentStatus}>
                {i.status === "draft" ? "—" : (t.payStatus[i.paymentStatus] ?? i.paymentStatus)}
              </td>
              <td data-label={t.total} class="num">
                <Money value={i.total} currency={i.currency} />
              </td>
              <td data-label={t.amountDue} class="num">
                <Money value={i.amountDue} currency={i.currency} />
              </td>
            </tr>
          ))}
        />
      )}
      {data?.invoices.pageInfo.hasNextPage && (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setShown(rows);
            setAfter(data.invoices.pageInfo.endCursor);
          }}
        >
          {t.more}
        </button>
      )}
    </>
  );
}

interface InvoicePage extends InvoiceRow {
  subtotal: string;
  tax: string;
  exempt: string;
  amountPaid: string;
  taxAgency: { agency?: string; status?: string; sii_message?: string };
  customer: { id: string; name: string | null; taxId: string | null };
  lines: { id: string; name: string; quantity: string; amount: string; discount: string; total: string }[];
  payments: { id: string; date: string; amount: string; status: string; failureReason: string | null }[];
  creditNotes: {
    id: string;
    number: number | null;
    numbering: string | null;
    document: { name: string };
    date: string;
    status: string;
    total: string;
  }[];
}

const INVOICE = gql`
  query DashboardInvoice($id: ID!) {
    node(id: $id) {
      ... on Invoice {
        ${ROW} subtotal tax exempt amountPaid taxAgency
        customer { id name taxId }
        lines { id name quantity amount discount total }
        payments { id date amount status failureReason }
        creditNotes { id number numbering document { name } date status total }
      }
    }
  }
`;
/** Finalize a draft: numbers it, issues it (a DTE when the organization is set up with SII). */
function Finalize({ id, done }: { id: string; done: () => void }) {
  const { t } = usePage();
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  async function finalize() {
    setBusy(true);
    const result = await client
      .mutation("mutation($id: ID!) { finalizeInvoice(id: $id) { id status number } }", { id })
      .toPromise();
    setBusy(false);
    setMessage(result.error ? { ok: false, text: errorMessage(result.error) } : { ok: true, text: t.finalized });
    if (!result.error) done();
  }
  return (
    <div class="actions-bar">
      <button type="button" disabled={busy} onClick={() => void finalize()}>
        {busy ? t.finalizing : t.finalize}
      </button>
      {message && <Message {...message} />}
    </div>
  );
}

// the actions and history: their own script, loaded with the first invoice's page
const InvoiceActions = lazy(() => import("./invoice-actions.js").then((m) => m.InvoiceActions));
const InvoiceHistory = lazy(() => import("./invoice-actions.js").then((m) => m.InvoiceHistory));

export function Invoice({ id }: { id: string }) {
  const { t, canWrite } = usePage();
  const [{ data, error, fetching }, reload] = useQuery<{ node: InvoicePage | null }>({
    query: INVOICE,
    variables: { id },
  });
  const [finalizedNow, setFinalizedNow] = useState(false);
  // changed by each action: the history is read again
  const [version, setVersion] = useState(0);
  if (!data) return <Pending fetching={fetching} error={error} />;
  const i = data.node;
  if (!i || !("lines" in i)) return <Message ok={false} text={t.notFound} />;
  const label = docLabel(t, i);
  const sii = i.taxAgency.agency === "sii" ? (t.siiStatus[i.taxAgency.status ?? ""] ?? i.taxAgency.status) : t.notSii;
  return (
    <>
      <p>
        <a href="#/invoices">← {t.invoices}</a>
      </p>
      <h1>{label}</h1>
      {finalizedNow && <Message ok text={t.finalized} />}
      {canWrite && i.status === "draft" && (
        <Finalize
          id={i.id}
          done={() => {
            setFinalizedNow(true);
            setVersion(version + 1);
            reload({ requestPolicy: "network-only" });
          }}
        />
      )}
      {canWrite && i.status === "finalized" && (
        <InvoiceActions
          id={i.id}
          done={() => {
            setVersion((v) => v + 1);
            reload({ requestPolicy: "network-only" });
          }}
        />
      )}
      <dl class="summary">
        <dt>{t.customer}</dt>
        <dd>
          <a href={`#/customers/${i.customer.id}`}>{i.customer.name ?? i.customer.id}</a>
          {i.customer.taxId && ` (${i.customer.taxId})`}
        </dd>
        <dt>{t.date}</dt>
        <dd>
          <DateText value={i.date} />
        </dd>
        <dt>{t.dueDate}</dt>
        <dd>
          <DateText value={i.dueDate} />
        </dd>
        <dt>{t.status}</dt>
        <dd class="status">{t.docStatus[i.status] ?? i.status}</dd>
        <dt>{t.paymentStatus}</dt>
        <dd class="payment-status">{i.status === "draft" ? "—" : (t.payStatus[i.paymentStatus] ?? i.paymentStatus)}</dd>
        <dt>{t.sii}</dt>
        <dd class="sii">
          {sii}
          {i.taxAgency.sii_message && ` (${i.taxAgency.sii_message})`}
        </dd>
      </dl>
      <Section id="lines" title={t.lines}>
        <LinesTable lines={i.lines} currency={i.currency} discounts />
        <Totals doc={i} currency={i.currency}>
          <dt>{t.amountPaid}</dt>
          <dd class="num">
            <Money value={i.amountPaid} currency={i.currency} />
          </dd>
          <dt>{t.amountDue}</dt>
          <dd class="num due">
            <Money value={i.amountDue} currency={i.currency} />
          </dd>
        </Totals>
      </Section>
      <Section id="invoice-payments" title={t.payments}>
        {i.payments.length === 0 ? (
          <p>{t.none}</p>
        ) : (
          <ul>
            {i.payments.map((p) => (
              <li key={p.id} data-id={p.id}>
                <DateText value={p.date} /> · <Money value={p.amount} currency={i.currency} /> ·{" "}
                {t.paymentState[p.status] ?? p.status}
                {p.failureReason && ` · ${p.failureReason}`}
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section id="invoice-notes" title={t.creditNotes}>
        {i.creditNotes.length === 0 ? (
          <p>{t.none}</p>
        ) : (
          <ul>
            {i.creditNotes.map((n) => (
              <li key={n.id} data-id={n.id}>
                <a href={`#/creditnotes/${n.id}`}>{docLabel(t, n)}</a> · <DateText value={n.date} /> ·{" "}
                <Money value={n.total} currency={i.currency} /> · {t.docStatus[n.status] ?? n.status}
              </li>
            ))}
          </ul>
        )}
      </Section>
      <InvoiceHistory key={version} id={i.id} />
      {/* a new PDF once the draft is finalized (numbered) */}
      <Pdf type="Invoice" key={`${i.status}-${i.number ?? ""}`} id={i.id} label={label} />
    </>
  );
}
