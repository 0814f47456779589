/**
 * Subscriptions: the list filtered by status (kept in the address), and a subscription's page with its lines, status,
 * period, the upcoming invoice (`upcomingInvoice`: its lines and total) and the actions its status allows to members
 * who may write: pause, resume, cancel now or at the end of the period (each asked with `Confirm`).
 */
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { client, errorMessage } from "./api.js";
import {
  Confirm,
  DateText,
  LinesTable,
  Message,
  nodes,
  Pending,
  Section,
  StatusFilter,
  Table,
  Totals,
  usePage,
  type Currency,
  type Edges,
} from "./ui.js";

interface SubscriptionRow {
  id: string;
  status: string;
  nextBilling: string;
  cancelAtPeriodEnd: boolean;
  customer: { id: string; name: string | null };
  lines: { id: string; quantity: string; plan: { name: string; currency: Currency } }[];
}

const ROW =
  "id status nextBilling cancelAtPeriodEnd customer { id name } " +
  "lines { id quantity plan { name currency { id decimals } } }";
const LIST = gql`
  query DashboardSubscriptions($where: SubscriptionWhere, $after: String) {
    subscriptions(first: 50, after: $after, where: $where) {
      edges { node { ${ROW} } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;
const STATUSES = ["active", "past_due", "paused", "cancelled"];

/** The plans of a subscription's lines, with their quantities when more than one. */
const plans = (s: SubscriptionRow) =>
  s.lines.map((l) => (Number(l.quantity) === 1 ? l.plan.name : `${l.plan.name} × ${l.quantity}`)).join(", ");

export function Subscriptions({ query }: { query: URLSearchParams }) {
  const { t } = usePage();
  const status = STATUSES.includes(query.get("status") ?? "") ? query.get("status")! : "";
  const [after, setAfter] = useState<string | null>(null);
  const [shown, setShown] = useState<SubscriptionRow[]>([]);
  const [{ data, error, fetching }] = useQuery<{
    subscriptions: Edges<SubscriptionRow> & { pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  }>({ query: LIST, variables: { where: status ? { status: { equals: status } } : {}, after } });
  const rows = [...shown, ...nodes(data?.subscriptions)];
  return (
    <>
      <h1>{t.subscriptions}</h1>
      <StatusFilter route="subscriptions" status={status} statuses={STATUSES} names={t.subscriptionStatus} />
      {error && <Message ok={false} text={errorMessage(error)} />}
      {!data && fetching ? (
        <p>{t.loading}</p>
      ) : (
        <Table
          name="subscriptions"
          empty={t.noSubscriptions}
          columns={[{ label: t.customer }, { label: t.plans }, { label: t.status }, { label: t.nextBilling }]}
          rows={rows.map((s) => (
            <tr key={s.id} data-id={s.id}>
              <th scope="row">
                <a href={`#/subscriptions/${s.id}`}>{s.customer.name ?? s.customer.id}</a>
              </th>
              <td data-label={t.plans}>{plans(s)}</td>
              <td data-label={t.status} class="status">
                {t.subscriptionStatus[s.status] ?? s.status}
              </td>
              <td data-label={t.nextBilling} class="date">
                {s.status === "cancelled" ? "—" : <DateText value={s.nextBilling} />}
              </td>
            </tr>
          ))}
        />
      )}
      {data?.subscriptions.pageInfo.hasNextPage && (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setShown(rows);
            setAfter(data.subscriptions.pageInfo.endCursor);
          }}
        >
          {t.more}
        </button>
      )}
    </>
  );
}

interface Upcoming {
  date: string;
  periodStart: string;
  periodEnd: string;
  currency: string;
  subtotal: string;
  tax: string;
  exempt: string;
  total: string;
  lines: { name: string; quantity: string; amount: string; total: string }[];
}

interface SubscriptionPage extends SubscriptionRow {
  dateStart: string;
  previousBilling: string | null;
  paused: string | null;
  cancelled: string | null;
  cancelReason: string | null;
  upcomingInvoice: Upcoming | null;
}

const SUBSCRIPTION = gql`
  query DashboardSubscription($id: ID!) {
    node(id: $id) {
      ... on Subscription {
        ${ROW} dateStart previousBilling paused cancelled cancelReason
        upcomingInvoice {
          date periodStart periodEnd currency subtotal tax exempt total
          lines { name quantity amount total }
        }
      }
    }
  }
`;

type Action = "pause" | "resume" | "cancelNow" | "cancelAtPeriodEnd";
const MUTATIONS: Record<Action, string> = {
  pause: "mutation($id: ID!) { pauseSubscription(id: $id) { id status } }",
  resume: "mutation($id: ID!) { resumeSubscription(id: $id) { id status } }",
  cancelNow: "mutation($id: ID!) { cancelSubscription(id: $id) { id status } }",
  cancelAtPeriodEnd: "mutation($id: ID!) { cancelSubscription(id: $id, atPeriodEnd: true) { id cancelAtPeriodEnd } }",
};

/** The actions the subscription's status allows, each asked in the page before it is done. */
function Actions({ s, done }: { s: SubscriptionPage; done: () => void }) {
  const { t } = usePage();
  const [asking, setAsking] = useState<Action | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const allowed: Action[] = [];
  if (s.status === "active") allowed.push("pause");
  if (s.status === "paused") allowed.push("resume");
  if (s.status !== "cancelled") allowed.push("cancelNow");
  if (s.status !== "cancelled" && !s.cancelAtPeriodEnd) allowed.push("cancelAtPeriodEnd");
  async function run(action: Action) {
    setAsking(null);
    const result = await client.mutation(MUTATIONS[action], { id: s.id }).toPromise();
    setMessage(
      result.error ? { ok: false, text: errorMessage(result.error) } : { ok: true, text: t.subscriptionDone[action] },
    );
    if (!result.error) done();
  }
  return (
    <div class="actions-bar">
      {asking ? (
        <Confirm
          question={t.subscriptionAsk[asking]}
          yes={t.subscriptionAction[asking]}
          onYes={() => void run(asking)}
          onNo={() => setAsking(null)}
        />
      ) : (
        allowed.map((a) => (
          <Fragment key={a}>
            <button type="button" class={a.startsWith("cancel") ? "secondary" : undefined} onClick={() => setAsking(a)}>
              {t.subscriptionAction[a]}
            </button>{" "}
          </Fragment>
        ))
      )}
      {message && <Message {...message} />}
    </div>
  );
}

/** The invoice the next cycle will produce: its period, lines and totals. */
function UpcomingInvoice({ u, decimals }: { u: Upcoming; decimals: number }) {
  const { t } = usePage();
  const currency = { id: u.currency, decimals };
  return (
    <Section id="upcoming" title={t.upcomingInvoice}>
      <p>
        {t.date} <DateText value={u.date} /> · {t.period} <DateText value={u.periodStart} /> –{" "}
        <DateText value={u.periodEnd} />
      </p>
      <LinesTable lines={u.lines} currency={currency} />
      <Totals doc={u} currency={currency} />
    </Section>
  );
}

export function Subscription({ id }: { id: string }) {
  const { t, canWrite } = usePage();
  const [{ data, error, fetching }, reload] = useQuery<{ node: SubscriptionPage | null }>({
    query: SUBSCRIPTION,
    variables: { id },
  });
  if (!data) return <Pending fetching={fetching} error={error} />;
  const s = data.node;
  if (!s || !("lines" in s)) return <Message ok={false} text={t.notFound} />;
  const u = s.upcomingInvoice;
  // the preview names its currency; its decimals are the plans' currency's (a subscription bills in one currency)
  const decimals = s.lines.find((l) => l.plan.currency.id === u?.currency)?.plan.currency.decimals ?? 0;
  return (
    <>
      <p>
        <a href="#/subscriptions">← {t.subscriptions}</a>
      </p>
      <h1>{plans(s)}</h1>
      {canWrite && <Actions s={s} done={() => reload({ requestPolicy: "network-only" })} />}
      <dl class="summary">
        <dt>{t.customer}</dt>
        <dd>
          <a href={`#/customers/${s.customer.id}`}>{s.customer.name ?? s.customer.id}</a>
        </dd>
        <dt>{t.status}</dt>
        <dd class="status">
          {t.subscriptionStatus[s.status] ?? s.status}
          {s.cancelAtPeriodEnd && s.status !== "cancelled" && ` · ${t.endsAtPeriodEnd}`}
        </dd>
        <dt>{t.dateStart}</dt>
        <dd>
          <DateText value={s.dateStart} />
        </dd>
        <dt>{t.period}</dt>
        <dd class="period">
          <DateText value={s.previousBilling ?? s.dateStart} /> – <DateText value={s.nextBilling} />
        </dd>
        {s.paused && (
          <>
            <dt>{t.pausedOn}</dt>
            <dd>
              <DateText value={s.paused} />
            </dd>
          </>
        )}
        {s.cancelled && (
          <>
            <dt>{t.cancelledOn}</dt>
            <dd>
              <DateText value={s.cancelled} />
              {s.cancelReason && ` (${s.cancelReason})`}
            </dd>
          </>
        )}
      </dl>
      <Section id="lines" title={t.lines}>
        <Table
          columns={[{ label: t.plan }, { label: t.quantity, num: true }]}
          rows={s.lines.map((l) => (
            <tr key={l.id}>
              <th scope="row">{l.plan.name}</th>
              <td data-label={t.quantity} class="num">
                {l.quantity}
              </td>
            </tr>
          ))}
        />
      </Section>
      {u ? (
        <UpcomingInvoice u={u} decimals={decimals} />
      ) : (
        <Section id="upcoming" title={t.upcomingInvoice}>
          <p>{t.noUpcomingInvoice}</p>
        </Section>
      )}
    </>
  );
}
