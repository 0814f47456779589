/**
 * The Developers page's webhooks (admins): the endpoints of the mode (`webhookEndpoints`), their latest delivery
 * attempts (`webhookDeliveries`, newest first) with a button sending an attempt's event again to its endpoint
 * (`redeliverEvent`), and the event log (`events`, newest first).
 */
import { useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { client, errorMessage } from "./api.js";
import { DateText, Message, nodes, Pending, Section, Table, usePage, type Edges } from "./ui.js";

interface WebhooksData {
  webhookEndpoints: Edges<{ id: string; url: string; status: string; disabledReason: string | null }>;
  webhookDeliveries: Edges<{
    id: string;
    created: string;
    attempt: number;
    statusCode: number | null;
    succeeded: boolean;
    error: string | null;
    endpoint: { id: string; url: string };
    event: { id: string; type: string };
  }>;
  events: Edges<{ id: string; created: string; type: string }>;
}

const WEBHOOKS = gql`
  query DashboardWebhooks {
    webhookEndpoints(first: 16) { edges { node { id url status disabledReason } } }
    webhookDeliveries(first: 20) { edges { node { id created attempt statusCode succeeded error
      endpoint { id url } event { id type } } } }
    events(first: 20) { edges { node { id created type } } }
  }
`;
const REDELIVER = `mutation($id: ID!, $endpoint: ID) { redeliverEvent(id: $id, endpoint: $endpoint) { id } }`;

export function Webhooks() {
  const { t } = usePage();
  const [{ data, error, fetching }, refetch] = useQuery<WebhooksData>({ query: WEBHOOKS });
  const [answer, setAnswer] = useState<{ ok: boolean; text: string } | null>(null);
  async function redeliver(event: string, endpoint: string) {
    const result = await client.mutation(REDELIVER, { id: event, endpoint }).toPromise();
    setAnswer(result.error ? { ok: false, text: errorMessage(result.error) } : { ok: true, text: t.resent(event) });
    refetch({ requestPolicy: "network-only" });
  }
  if (!data) return <Pending fetching={fetching} error={error} />;
  return (
    <>
      <Section id="webhook-endpoints" title={t.webhookEndpoints}>
        {nodes(data.webhookEndpoints).length === 0 ? (
          <p>{t.none}</p>
        ) : (
          <ul class="endpoints">
            {nodes(data.webhookEndpoints).map((e) => (
              <li key={e.id} data-id={e.id}>
                <code>{e.url}</code> · {e.status}
                {e.disabledReason ? ` · ${e.disabledReason}` : ""}
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section id="deliveries" title={t.deliveries}>
        {answer && <Message ok={answer.ok} text={answer.text} />}
        <Table
          name="deliveries"
          columns={[
            { label: t.date },
            { label: t.eventType },
            { label: t.endpoint },
            { label: t.attempt, num: true },
            { label: t.answer },
            { label: t.actions, hidden: true },
          ]}
          rows={nodes(data.webhookDeliveries).map((d) => (
            <tr key={d.id} data-id={d.id}>
              <td data-label={t.date} class="date">
                <DateText value={d.created} />
              </td>
              <td data-label={t.eventType}>{d.event.type}</td>
              <td data-label={t.endpoint}>{d.endpoint.url}</td>
              <td data-label={t.attempt} class="num">
                {d.attempt}
              </td>
              <td data-label={t.answer} class="answer">
                {d.succeeded ? t.delivered : t.failedDelivery}
                {d.statusCode !== null ? ` (HTTP ${d.statusCode})` : ""}
                {d.error ? ` · ${d.error}` : ""}
              </td>
              <td class="row-actions">
                <button type="button" class="secondary" onClick={() => void redeliver(d.event.id, d.endpoint.id)}>
                  {t.resend}
                </button>
              </td>
            </tr>
          ))}
        />
      </Section>
      <Section id="events" title={t.eventLog}>
        {nodes(data.events).length === 0 ? (
          <p>{t.none}</p>
        ) : (
          <ul class="events">
            {nodes(data.events).map((e) => (
              <li key={e.id} data-id={e.id}>
                <DateText value={e.created} /> · {e.type} · <code>{e.id}</code>
              </li>
            ))}
          </ul>
        )}
      </Section>
    </>
  );
}
