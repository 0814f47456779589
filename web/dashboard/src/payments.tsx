/**
 * Payments: the list filtered by status (kept in the address), 50 a page: date, customer, the invoice it pays (a
 * link to its page), amount, status, and why it failed (`failureReason`: the gateway's decline code and message); the
 * date links the payment's page (payment.tsx) with each charge attempt.
 */
import { useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { errorMessage } from "./api.js";
import {
  DateText,
  docLabel,
  Message,
  nodes,
  PaymentAmount,
  StatusFilter,
  Table,
  usePage,
  type Currency,
  type Edges,
} from "./ui.js";

interface PaymentRow {
  id: string;
  date: string;
  amount: string;
  currency: string;
  status: string;
  failureReason: string | null;
  customer: { id: string; name: string | null } | null;
  invoice: {
    id: string;
    number: number | null;
    numbering: string | null;
    document: { name: string };
    currency: Currency;
  } | null;
}

const LIST = gql`
  query DashboardPayments($where: PaymentWhere, $after: String) {
    payments(first: 50, after: $after, where: $where) {
      edges {
        node {
          id date amount currency status failureReason customer { id name }
          invoice { id number numbering document { name } currency { id decimals } }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
`;
const STATUSES = ["succeeded", "processing", "requires_payment_method", "canceled"];

export function Payments({ query }: { query: URLSearchParams }) {
  const { t } = usePage();
  const status = STATUSES.includes(query.get("status") ?? "") ? query.get("status")! : "";
  const [after, setAfter] = useState<string | null>(null);
  const [shown, setShown] = useState<PaymentRow[]>([]);
  const [{ data, error, fetching }] = useQuery<{
    payments: Edges<PaymentRow> & { pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  }>({ query: LIST, variables: { where: status ? { status: { equals: status } } : {}, after } });
  const rows = [...shown, ...nodes(data?.payments)];
  return (
    <>
      <h1>{t.payments}</h1>
      <StatusFilter route="payments" status={status} statuses={STATUSES} names={t.paymentState} />
      {error && <Message ok={false} text={errorMessage(error)} />}
      {!data && fetching ? (
        <p>{t.loading}</p>
      ) : (
        <Table
          name="payments"
          empty={t.noPayments}
          columns={[
            { label: t.date },
            { label: t.customer },
            { label: t.invoice },
            { label: t.amount, num: true },
            { label: t.status },
            { label: t.reason },
          ]}
          rows={rows.map((p) => (
            <tr key={p.id} data-id={p.id}>
              <th scope="row" class="date">
                <a href={`#/payments/${p.id}`} aria-label={t.paymentTitle(p.id)}>
                  <DateText value={p.date} />
                </a>
              </th>
              <td data-label={t.customer}>
                {p.customer ? <a href={`#/customers/${p.customer.id}`}>{p.customer.name ?? p.customer.id}</a> : "—"}
              </td>
              <td data-label={t.invoice}>
                {p.invoice ? <a href={`#/invoices/${p.invoice.id}`}>{docLabel(t, p.invoice)}</a> : "—"}
              </td>
              <td data-label={t.amount} class="num">
                <PaymentAmount payment={p} />
              </td>
              <td data-label={t.status} class="status">
                {t.paymentState[p.status] ?? p.status}
              </td>
              <td data-label={t.reason} class="reason">
                {p.failureReason ?? "—"}
              </td>
            </tr>
          ))}
        />
      )}
      {data?.payments.pageInfo.hasNextPage && (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setShown(rows);
            setAfter(data.payments.pageInfo.endCursor);
          }}
        >
          {t.more}
        </button>
      )}
    </>
  );
}
