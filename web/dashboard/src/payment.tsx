/**
 * A payment's page (`#/payments/<pay_ id>`, loaded on demand: its own script): the payment (date, customer, the
 * invoice it pays, amount, status, when it succeeded, the latest decline reason) and each of its charge attempts at
 * the gateway (`Payment.charges`): attempt, when, status, amount, the source charged, and a declined attempt's code and
 * message as the gateway gave them.
 */
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import {
  DateText,
  DateTimeText,
  docLabel,
  Message,
  PaymentAmount,
  Pending,
  Section,
  sourceLabel,
  Table,
  usePage,
  type Currency,
} from "./ui.js";

interface Charge {
  id: string;
  attempt: number;
  status: string;
  amount: string;
  currency: string;
  gateway: string;
  source: { id: string; data: Record<string, unknown> } | null;
  failureCode: string | null;
  failureMessage: string | null;
  created: string;
}

interface PaymentPage {
  id: string;
  date: string;
  amount: string;
  currency: string;
  status: string;
  failureReason: string | null;
  paymentDate: string | null;
  customer: { id: string; name: string | null } | null;
  invoice: {
    id: string;
    number: number | null;
    numbering: string | null;
    document: { name: string };
    currency: Currency;
  } | null;
  charges: Charge[];
}

const PAYMENT = gql`
  query DashboardPayment($id: ID!) {
    node(id: $id) {
      ... on Payment {
        id date amount currency status failureReason paymentDate customer { id name }
        invoice { id number numbering document { name } currency { id decimals } }
        charges { id attempt status amount currency gateway source { id data } failureCode failureMessage created }
      }
    }
  }
`;

export function Payment({ id }: { id: string }) {
  const { t } = usePage();
  const [{ data, error, fetching }] = useQuery<{ node: PaymentPage | null }>({ query: PAYMENT, variables: { id } });
  if (!data) return <Pending fetching={fetching} error={error} />;
  const p = data.node;
  if (!p || !("charges" in p)) return <Message ok={false} text={t.notFound} />;
  return (
    <>
      <p>
        <a href="#/payments">← {t.payments}</a>
      </p>
      <h1>{t.paymentTitle(p.id)}</h1>
      <dl class="summary">
        <dt>{t.date}</dt>
        <dd>
          <DateText value={p.date} />
        </dd>
        <dt>{t.customer}</dt>
        <dd>{p.customer ? <a href={`#/customers/${p.customer.id}`}>{p.customer.name ?? p.customer.id}</a> : "—"}</dd>
        <dt>{t.invoice}</dt>
        <dd>{p.invoice ? <a href={`#/invoices/${p.invoice.id}`}>{docLabel(t, p.invoice)}</a> : "—"}</dd>
        <dt>{t.amount}</dt>
        <dd class="num-value">
          <PaymentAmount payment={p} />
        </dd>
        <dt>{t.status}</dt>
        <dd class="status">{t.paymentState[p.status] ?? p.status}</dd>
        <dt>{t.paidAt}</dt>
        <dd>
          <DateTimeText value={p.paymentDate} />
        </dd>
        <dt>{t.reason}</dt>
        <dd class="reason">{p.failureReason ?? "—"}</dd>
      </dl>
      <Section id="charges" title={t.charges}>
        <Table
          name="charges"
          empty={t.noCharges}
          columns={[
            { label: t.attempt },
            { label: t.date },
            { label: t.status },
            { label: t.amount, num: true },
            { label: t.source },
            { label: t.declineCode },
            { label: t.declineMessage },
          ]}
          rows={p.charges.map((c) => (
            <tr key={c.id} data-id={c.id}>
              <th scope="row">{c.attempt}</th>
              <td data-label={t.date} class="date">
                <DateTimeText value={c.created} />
              </td>
              <td data-label={t.status} class="status">
                {t.chargeState[c.status] ?? c.status}
              </td>
              <td data-label={t.amount} class="num">
                <PaymentAmount payment={{ amount: c.amount, currency: c.currency, invoice: p.invoice }} />
              </td>
              <td data-label={t.source}>{sourceLabel(c.gateway, c.source)}</td>
              <td data-label={t.declineCode} class="code">
                {c.failureCode ?? "—"}
              </td>
              <td data-label={t.declineMessage} class="message">
                {c.failureMessage ?? "—"}
              </td>
            </tr>
          ))}
        />
      </Section>
    </>
  );
}
