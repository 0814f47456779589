/** Small pieces every page of the dashboard uses: the page context, the hash route, amounts, documents' names, PDFs. */
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import type { ComponentChildren, FunctionComponent } from "preact";
import type { CombinedError } from "@urql/core";
import { formatDate, formatMoney, type Locale } from "../../shared/format.js";
import { useHash } from "../../shared/route.js";
import { errorMessage } from "./api.js";
import type { Texts } from "./i18n.js";

/** What every page reads: the texts and language, the member's role, and whether it may write (not a viewer). */
export interface Page {
  t: Texts;
  locale: Locale;
  role: "admin" | "finance" | "viewer" | null;
  canWrite: boolean;
}

export const PageContext = createContext<Page>(null as unknown as Page);

export const usePage = () => useContext(PageContext);

/** The hash route (`#/invoices/inv_...`), as path and query. */
export function useRoute(): { path: string; query: URLSearchParams } {
  const [path, query = ""] = useHash().replace(/^#/, "").split("?");
  return { path: path || "/", query: new URLSearchParams(query) };
}

export interface Currency {
  id: string;
  decimals: number;
}

/** An amount in its currency, formatted for the page's language. */
export function Money({ value, currency }: { value: string; currency: Currency }) {
  const { locale } = usePage();
  return <>{formatMoney(value, currency.id, currency.decimals, locale)}</>;
}

/** A payment's amount: in its invoice's currency (which knows its decimals), else as the API gives it. */
export function PaymentAmount({
  payment: p,
}: {
  payment: { amount: string; currency: string; invoice: { currency: Currency } | null };
}) {
  return p.invoice ? <Money value={p.amount} currency={p.invoice.currency} /> : <>{`${p.currency} ${p.amount}`}</>;
}

/** An instant (ISO 8601) as a short date and time in the reader's language and time zone; "—" when none. */
export function DateTimeText({ value }: { value: string | null | undefined }) {
  const { locale } = usePage();
  const format = new Intl.DateTimeFormat(locale === "es" ? "es-CL" : "en-GB", {
    dateStyle: "short",
    timeStyle: "short",
  });
  return <>{value ? format.format(new Date(value)) : "—"}</>;
}

/** A CAF running out: fewer than 10 % of its range's folios left (the overview lists them; settings flag them). */
export const cafRunningOut = (c: { rangeFrom: number; rangeTo: number; available: number }) =>
  c.available * 10 < c.rangeTo - c.rangeFrom + 1;

/** A payment source as pages name it: the card's brand and last four digits when its gateway gave them, else its id. */
export function sourceLabel(gateway: string, source: { id: string; data: Record<string, unknown> } | null): string {
  const data = source?.data ?? {};
  const brand = typeof data.brand === "string" ? data.brand : gateway;
  return typeof data.last4 === "string" ? `${brand} •••• ${data.last4}` : `${brand} (${source?.id ?? "—"})`;
}

export function DateText({ value }: { value: string | null | undefined }) {
  const { locale } = usePage();
  return <>{formatDate(value, locale)}</>;
}

/** A document as its PDF heads it: a draft by its id, the internal series as a non-tax document. */
export function docLabel(
  t: Texts,
  doc: { id: string; number: number | null; numbering: string | null; document: { name: string } },
): string {
  if (doc.number === null) return t.draft(doc.id);
  if (doc.numbering === "internal") return t.nonTaxDocument(doc.number);
  return `${doc.document.name} ${doc.number}`;
}

/**
 * A component of a module loaded on demand (a dynamic `import()`: its own script, fetched the first time the
 * component is drawn, so the first page stays small): "loading" until it arrives, the error if it cannot.
 */
export function lazy<P extends object>(load: () => Promise<FunctionComponent<P>>): FunctionComponent<P> {
  let loaded: FunctionComponent<P> | null = null;
  return function Lazy(props: P) {
    const { t } = usePage();
    const [Loaded, setLoaded] = useState<FunctionComponent<P> | null>(() => loaded);
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      if (!Loaded)
        load().then(
          (c) => setLoaded(() => (loaded = c)),
          () => setFailed(true),
        );
    }, []);
    if (Loaded) return <Loaded {...props} />;
    return failed ? <Message ok={false} text={t.error} /> : <p>{t.loading}</p>;
  };
}

/** A titled part of a page. */
export function Section({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {children}
    </section>
  );
}

/** A message: an error (alert) or a confirmation (status). */
export function Message({ ok, text }: { ok: boolean; text: string }) {
  return (
    <p role={ok ? "status" : "alert"} class={ok ? "success" : "error"}>
      {text}
    </p>
  );
}

/** A query's result before it has data: "loading" while it runs, else its error. */
export function Pending({ fetching, error }: { fetching: boolean; error?: CombinedError }) {
  const { t } = usePage();
  return fetching ? <p>{t.loading}</p> : <Message ok={false} text={error ? errorMessage(error) : t.error} />;
}

/** A table column's header: its text; `num` right-aligns amounts; `hidden` is read by screen readers only. */
export interface Column {
  label: string;
  num?: boolean;
  hidden?: boolean;
}

/**
 * A list as a table: the header row from `columns`, then `rows` (each a `<tr>` whose first cell is a row header and
 * whose other cells carry `data-label`, which the stylesheet shows beside each value when a phone turns rows into
 * cards); `empty` (default: "none") instead of the table when there is no row. `name` is the table's class.
 */
export function Table({
  name,
  caption,
  columns,
  empty,
  rows,
}: {
  name?: string;
  caption?: string;
  columns: Column[];
  empty?: string;
  rows: ComponentChildren[];
}) {
  const { t } = usePage();
  if (rows.length === 0) return <p>{empty ?? t.none}</p>;
  return (
    <div class="table">
      <table class={name}>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col" class={c.num ? "num" : undefined}>
                {c.hidden ? <span class="visually-hidden">{c.label}</span> : c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{rows}</tbody>
      </table>
    </div>
  );
}

/**
 * A list's status filter: choosing a status puts it in the address (`#/<route>?status=...`), which the list
 * follows; "all" removes it. `names` gives each status's words in the page's language.
 */
export function StatusFilter({
  route,
  status,
  statuses,
  names,
}: {
  route: string;
  status: string;
  statuses: readonly string[];
  names: Record<string, string>;
}) {
  const { t } = usePage();
  return (
    <form class="filters" onSubmit={(e) => e.preventDefault()}>
      <label>
        {t.status}
        <select
          name="status"
          value={status}
          onChange={(e) => {
            const value = e.currentTarget.value;
            location.hash = `#/${route}${value ? `?status=${value}` : ""}`;
          }}
        >
          <option value="">{t.all}</option>
          {statuses.map((s) => (
            <option key={s} value={s}>
              {names[s] ?? s}
            </option>
          ))}
        </select>
      </label>
    </form>
  );
}

/** A document's line as the pages read it (`discount`: a percent, on invoices). */
export interface DocumentLine {
  /** absent on an upcoming invoice's lines (not stored): the row is keyed by its position */
  id?: string;
  name: string;
  quantity: string;
  amount: string;
  discount?: string;
  total: string;
}

/** A document's lines: name, quantity, unit price, the discount column when `discounts`, and the line total. */
export function LinesTable({
  lines,
  currency,
  discounts = false,
}: {
  lines: DocumentLine[];
  currency: Currency;
  discounts?: boolean;
}) {
  const { t } = usePage();
  return (
    <Table
      columns={[
        { label: t.name },
        { label: t.quantity, num: true },
        { label: t.unitPrice, num: true },
        ...(discounts ? [{ label: t.discount, num: true }] : []),
        { label: t.total, num: true },
      ]}
      rows={lines.map((l, n) => (
        <tr key={l.id ?? n}>
          <th scope="row">{l.name}</th>
          <td data-label={t.quantity} class="num">
            {l.quantity}
          </td>
          <td data-label={t.unitPrice} class="num">
            <Money value={l.amount} currency={currency} />
          </td>
          {discounts && (
            <td data-label={t.discount} class="num">
              {l.discount} %
            </td>
          )}
          <td data-label={t.total} class="num">
            <Money value={l.total} currency={currency} />
          </td>
        </tr>
      ))}
    />
  );
}

/** A document's totals in `currency` (subtotal, exempt, tax, total), then `children`'s further terms. */
export function Totals({
  doc,
  currency,
  children,
}: {
  doc: { subtotal: string; exempt: string; tax: string; total: string };
  currency: Currency;
  children?: ComponentChildren;
}) {
  const { t } = usePage();
  return (
    <dl class="totals">
      <dt>{t.subtotal}</dt>
      <dd class="num">
        <Money value={doc.subtotal} currency={currency} />
      </dd>
      <dt>{t.exempt}</dt>
      <dd class="num">
        <Money value={doc.exempt} currency={currency} />
      </dd>
      <dt>{t.tax}</dt>
      <dd class="num">
        <Money value={doc.tax} currency={currency} />
      </dd>
      <dt>{t.total}</dt>
      <dd class="num total">
        <Money value={doc.total} currency={currency} />
      </dd>
      {children}
    </dl>
  );
}

export interface Edges<T> {
  edges: { node: T }[];
}

export const nodes = <T,>(connection: Edges<T> | undefined | null): T[] => connection?.edges.map((e) => e.node) ?? [];

/** A page only admins may see: others read why (GraphQL refuses them its queries and mutations anyway). */
export function AdminOnly({ children }: { children: ComponentChildren }) {
  const { t, role } = usePage();
  return role === "admin" ? <>{children}</> : <Message ok={false} text={t.adminsOnly} />;
}

/** A question asked in the page before an action that cannot be undone: yes or no. */
export function Confirm({
  question,
  yes,
  onYes,
  onNo,
}: {
  question: string;
  yes: string;
  onYes: () => void;
  onNo: () => void;
}) {
  const { t } = usePage();
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>{" "}
      <button type="button" class="danger" onClick={onYes}>
        {yes}
      </button>{" "}
      <button type="button" class="secondary" onClick={onNo}>
        {t.cancel}
      </button>
    </span>
  );
}

/** The PDF's query of each kind of document: one each, as a query may read at most three PDFs' cost (1,000 each). */
const PDFS = {
  Invoice: gql`
    query DashboardInvoicePdf($id: ID!) { node(id: $id) { ... on Invoice { id pdf } } }
  `,
  CreditNote: gql`
    query DashboardCreditNotePdf($id: ID!) { node(id: $id) { ... on CreditNote { id pdf } } }
  `,
  Order: gql`
    query DashboardOrderPdf($id: ID!) { node(id: $id) { ... on Order { id pdf } } }
  `,
};

/** A document's PDF (`type`: an invoice, credit note or order) shown in the page: an object URL of its bytes. */
export function Pdf({ type, id, label }: { type: keyof typeof PDFS; id: string; label: string }) {
  const { t } = usePage();
  const [{ data, error, fetching }] = useQuery<{ node: { pdf: string } | null }>({
    query: PDFS[type],
    variables: { id },
  });
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!data?.node?.pdf) return;
    const bytes = Uint8Array.from(atob(data.node.pdf), (c) => c.charCodeAt(0));
    const made = URL.createObjectURL(new Blob([bytes], { type: "application/pdf" }));
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [data]);
  return (
    <Section id="pdf" title={t.pdf}>
      {url ? <iframe class="pdf" title={t.pdfTitle(label)} src={url} /> : <Pending fetching={fetching} error={error} />}
    </Section>
  );
}
