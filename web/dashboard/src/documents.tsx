/**
 * Orders and credit notes: each a list filtered by status and date range (kept in the address), 50 a page, and a
 * document's page with its customer, date, status, the invoice it refers to, its lines, totals and PDF.
 */
import { useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { errorMessage } from "./api.js";
import type { Texts } from "./i18n.js";
import {
  DateText,
  docLabel,
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

/** Which documents a list or page shows: its route, its GraphQL names and its texts. */
export type Kind = "orders" | "creditnotes";
const KINDS = {
  orders: { type: "Order", field: "orders", where: "OrderWhere", title: (t: Texts) => t.orders },
  creditnotes: {
    type: "CreditNote",
    field: "creditNotes",
    where: "CreditNoteWhere",
    title: (t: Texts) => t.creditNotes,
  },
} as const;

interface DocumentRow {
  id: string;
  number: number | null;
  numbering: string | null;
  document: { name: string };
  date: string;
  status: string;
  total: string;
  currency: Currency;
  customer: { id: string; name: string | null };
}

const ROW = "id number numbering document { name } date status total currency { id decimals } customer { id name }";
const lists = Object.fromEntries(
  Object.entries(KINDS).map(([kind, k]) => [
    kind,
    gql`
      query Dashboard${k.type}s($where: ${k.where}, $after: String) {
        ${k.field}(first: 50, after: $after, where: $where) {
          edges { node { ${ROW} } }
          pageInfo { hasNextPage endCursor }
        }
      }
    `,
  ]),
) as Record<Kind, ReturnType<typeof gql>>;

/** The list's filters from the route's query (`status`, `from`, `to`). */
function where(query: URLSearchParams): Record<string, unknown> {
  const w: Record<string, unknown> = {};
  const status = query.get("status");
  if (status === "draft" || status === "finalized") w.status = { equals: status };
  const from = query.get("from");
  const to = query.get("to");
  if (from || to) w.date = { ...(from ? { gte: from } : {}), ...(to ? { lte: to } : {}) };
  return w;
}

/** The filters' form, filled from the address; submitting it puts them in the address (the list follows). */
function Filters({ kind, query }: { kind: Kind; query: URLSearchParams }) {
  const { t } = usePage();
  const [values, setValues] = useState(() =>
    Object.fromEntries(["status", "from", "to"].map((name) => [name, query.get(name) ?? ""])),
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
        for (const [name, value] of Object.entries(values)) if (value) params.set(name, value);
        const search = params.toString();
        location.hash = `#/${kind}${search ? `?${search}` : ""}`;
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
      <button type="submit">{t.filter}</button>
    </form>
  );
}

export function Documents({ kind, query }: { kind: Kind; query: URLSearchParams }) {
  const { t } = usePage();
  const k = KINDS[kind];
  const [after, setAfter] = useState<string | null>(null);
  const [shown, setShown] = useState<DocumentRow[]>([]);
  const [{ data, error, fetching }] = useQuery<
    Record<string, Edges<DocumentRow> & { pageInfo: { hasNextPage: boolean; endCursor: string | null } }>
  >({ query: lists[kind], variables: { where: where(query), after } });
  const connection = data?.[k.field];
  const rows = [...shown, ...nodes(connection)];
  return (
    <>
      <h1>{k.title(t)}</h1>
      <Filters kind={kind} query={query} />
      {error && <Message ok={false} text={errorMessage(error)} />}
      {!data && fetching ? (
        <p>{t.loading}</p>
      ) : (
        <Table
          name={kind}
          columns={[
            { label: t.document },
            { label: t.customer },
            { label: t.date },
            { label: t.status },
            { label: t.total, num: true },
          ]}
          rows={rows.map((d) => (
            <tr key={d.id} data-id={d.id}>
              <th scope="row">
                <a href={`#/${kind}/${d.id}`}>{docLabel(t, d)}</a>
              </th>
              <td data-label={t.customer}>{d.customer.name ?? d.customer.id}</td>
              <td data-label={t.date} class="date">
                <DateText value={d.date} />
              </td>
              <td data-label={t.status} class="status">
                {t.docStatus[d.status] ?? d.status}
              </td>
              <td data-label={t.total} class="num">
                <Money value={d.total} currency={d.currency} />
              </td>
            </tr>
          ))}
        />
      )}
      {connection?.pageInfo.hasNextPage && (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setShown(rows);
            setAfter(connection.pageInfo.endCursor);
          }}
        >
          {t.more}
        </button>
      )}
    </>
  );
}

interface DocumentPage extends DocumentRow {
  subtotal: string;
  exempt: string;
  tax: string;
  invoice: { id: string; number: number | null; numbering: string | null; document: { name: string } } | null;
  lines: { id: string; name: string; quantity: string; amount: string; total: string }[];
}

const pages = Object.fromEntries(
  Object.entries(KINDS).map(([kind, k]) => [
    kind,
    gql`
      query Dashboard${k.type}($id: ID!) {
        node(id: $id) {
          ... on ${k.type} {
            ${ROW} subtotal exempt tax
            invoice { id number numbering document { name } }
            lines { id name quantity amount total }
          }
        }
      }
    `,
  ]),
) as Record<Kind, ReturnType<typeof gql>>;

export function Document({ kind, id }: { kind: Kind; id: string }) {
  const { t } = usePage();
  const [{ data, error, fetching }] = useQuery<{ node: DocumentPage | null }>({
    query: pages[kind],
    variables: { id },
  });
  if (!data) return <Pending fetching={fetching} error={error} />;
  const d = data.node;
  if (!d || !("lines" in d)) return <Message ok={false} text={t.notFound} />;
  const label = docLabel(t, d);
  return (
    <>
      <p>
        <a href={`#/${kind}`}>← {KINDS[kind].title(t)}</a>
      </p>
      <h1>{label}</h1>
      <dl class="summary">
        <dt>{t.customer}</dt>
        <dd>
          <a href={`#/customers/${d.customer.id}`}>{d.customer.name ?? d.customer.id}</a>
        </dd>
        <dt>{t.date}</dt>
        <dd>
          <DateText value={d.date} />
        </dd>
        <dt>{t.status}</dt>
        <dd class="status">{t.docStatus[d.status] ?? d.status}</dd>
        <dt>{t.invoice}</dt>
        <dd>{d.invoice ? <a href={`#/invoices/${d.invoice.id}`}>{docLabel(t, d.invoice)}</a> : "—"}</dd>
      </dl>
      <Section id="lines" title={t.lines}>
        <LinesTable lines={d.lines} currency={d.currency} />
        <Totals doc={d} currency={d.currency} />
      </Section>
      <Pdf type={KINDS[kind].type} id={d.id} label={label} />
    </>
  );
}
