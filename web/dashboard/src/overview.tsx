/**
 * The overview: what needs attention, each from an existing query, then the revenue charts (revenue.tsx).
 * Overdue invoices are the ones the overdue sweep announced (`invoice_payment_overdue` events, kept 30 days) that
 * still have something due now (read again by id); failed payments are payments waiting for a payment method with a
 * failure reason; SII rejections are the `tax_document_rejected` events; disabled webhook endpoints and CAFs with
 * fewer than 10 % of their folios left are read whole (at most 16 endpoints; CAFs a page of 100).
 */
import type { ComponentChildren } from "preact";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { isZero } from "../../shared/format.js";
import { Revenue } from "./revenue.js";
import {
  cafRunningOut,
  DateText,
  docLabel,
  Money,
  nodes,
  PaymentAmount,
  Pending,
  Section,
  usePage,
  type Currency,
  type Edges,
} from "./ui.js";

interface EventNode {
  id: string;
  created: string;
  data: string;
}
interface OverviewData {
  overdue: Edges<EventNode>;
  rejected: Edges<EventNode>;
  payments: Edges<{
    id: string;
    amount: string;
    currency: string;
    date: string;
    failureReason: string | null;
    customer: { id: string; name: string | null } | null;
    invoice: { id: string; currency: Currency } | null;
  }>;
  webhookEndpoints: Edges<{ id: string; url: string; status: string; disabledReason: string | null }>;
  cafs: Edges<{ id: string; documentType: string; rangeFrom: number; rangeTo: number; available: number }>;
}
interface OverdueInvoice {
  id: string;
  number: number | null;
  numbering: string | null;
  document: { name: string };
  dueDate: string | null;
  amountDue: string;
  paymentStatus: string;
  currency: Currency;
  customer: { id: string; name: string | null };
}

const OVERVIEW = gql`
  query DashboardOverview {
    overdue: events(first: 100, where: { type: { equals: invoice_payment_overdue } }) {
      edges { node { id created data } }
    }
    rejected: events(first: 20, where: { type: { equals: tax_document_rejected } }) {
      edges { node { id created data } }
    }
    payments(first: 100, where: { status: { equals: requires_payment_method } }) {
      edges { node { id amount currency date failureReason customer { id name }
        invoice { id currency { id decimals } } } }
    }
    webhookEndpoints(first: 16) { edges { node { id url status disabledReason } } }
    cafs(first: 100) { edges { node { id documentType rangeFrom rangeTo available } } }
  }
`;

const INVOICES = gql`
  query DashboardOverdue($ids: [ID!]!) {
    nodes(ids: $ids) {
      ... on Invoice { id number numbering document { name } dueDate amountDue paymentStatus
        currency { id decimals } customer { id name } }
    }
  }
`;

/** The `data.object` of an event (JSON text, as webhooks send it). */
function eventObject(event: EventNode): { id?: string } {
  try {
    return (JSON.parse(event.data) as { object?: { id?: string } }).object ?? {};
  } catch {
    return {};
  }
}

function List({ items, empty }: { items: ComponentChildren[]; empty: string }) {
  return items.length ? <ul class="attention">{items}</ul> : <p>{empty}</p>;
}

function Overdue({ events }: { events: EventNode[] }) {
  const { t } = usePage();
  const ids = [...new Set(events.map((e) => eventObject(e).id).filter((id): id is string => !!id))];
  const [{ data }] = useQuery<{ nodes: (OverdueInvoice | null)[] }>({
    query: INVOICES,
    variables: { ids },
    pause: ids.length === 0,
  });
  // still due now: paid or uncollectible ones have left the list
  const due = (data?.nodes ?? []).filter(
    (i): i is OverdueInvoice => !!i && !isZero(i.amountDue) && i.paymentStatus !== "uncollectible",
  );
  return (
    <Section id="overdue" title={t.overdueInvoices}>
      <List
        empty={t.nothing}
        items={due.map((i) => (
          <li key={i.id} data-id={i.id}>
            <a href={`#/invoices/${i.id}`}>{docLabel(t, i)}</a> · {i.customer.name ?? i.customer.id} · {t.dueDate}{" "}
            <DateText value={i.dueDate} /> · {t.amountDue} <Money value={i.amountDue} currency={i.currency} />
          </li>
        ))}
      />
    </Section>
  );
}

/** The overview: what needs attention, then the revenue charts (twelve months up to `to`, yyyy-mm, or this month). */
export function Overview({ to }: { to: string | null }) {
  const { t } = usePage();
  const [{ data, error, fetching }] = useQuery<OverviewData>({ query: OVERVIEW });
  if (!data) return <Pending fetching={fetching} error={error} />;
  const failed = nodes(data.payments).filter((p) => p.failureReason);
  const disabled = nodes(data.webhookEndpoints).filter((e) => e.status === "disabled");
  // fewer than 10 % of the range left, compared in integers (available * 10 < size)
  const cafs = nodes(data.cafs).filter(cafRunningOut);
  return (
    <>
      <h1>{t.needsAttention}</h1>
      <Overdue events={nodes(data.overdue)} />
      <Section id="failed" title={t.failedPayments}>
        <List
          empty={t.nothing}
          items={failed.map((p) => (
            <li key={p.id} data-id={p.id}>
              {p.customer ? <a href={`#/customers/${p.customer.id}`}>{p.customer.name ?? p.customer.id}</a> : p.id}
              {" · "}
              <DateText value={p.date} /> · <PaymentAmount payment={p} /> · {p.failureReason}
            </li>
          ))}
        />
      </Section>
      <Section id="rejected" title={t.siiRejections}>
        <List
          empty={t.nothing}
          items={nodes(data.rejected).map((e) => {
            const doc = eventObject(e);
            const link = doc.id?.startsWith("inv_") ? `#/invoices/${doc.id}` : null;
            return (
              <li key={e.id} data-id={e.id}>
                <DateText value={e.created} /> · {link ? <a href={link}>{doc.id}</a> : doc.id}
              </li>
            );
          })}
        />
      </Section>
      <Section id="endpoints" title={t.disabledEndpoints}>
        <List
          empty={t.nothing}
          items={disabled.map((e) => (
            <li key={e.id} data-id={e.id}>
              {t.webhookReason(e.url, e.disabledReason ?? "")}
            </li>
          ))}
        />
      </Section>
      <Section id="cafs" title={t.cafsRunningOut}>
        <List
          empty={t.nothing}
          items={cafs.map((c) => (
            <li key={c.id} data-id={c.id}>
              {t.cafLeft(c.documentType, c.available, c.rangeTo - c.rangeFrom + 1)}
            </li>
          ))}
        />
      </Section>
      <Revenue to={to} />
    </>
  );
}
