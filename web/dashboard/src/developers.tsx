/**
 * The Developers page (admins): the organization's API keys of both modes (`apiKeys`), a new key (`createApiKey`,
 * shown once with a copy button) and revoking one (`revokeApiKey`, after a confirmation in the page); then the
 * webhook endpoints, their deliveries and the event log (webhooks.tsx).
 */
import { useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { client, errorMessage } from "./api.js";
import { Webhooks } from "./webhooks.js";
import { AdminOnly, Confirm, DateText, Message, Pending, Section, Table, usePage } from "./ui.js";

interface ApiKey {
  id: string;
  prefix: string;
  mode: "test" | "live";
  email: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

const KEY_FIELDS = "id prefix mode email createdAt lastUsedAt expiresAt revokedAt";
const API_KEYS = gql`query DashboardApiKeys { apiKeys { ${KEY_FIELDS} } }`;
const CREATE = `mutation($mode: ApiKeyMode!, $expiresAt: DateTime) {
  createApiKey(mode: $mode, expiresAt: $expiresAt) { key apiKey { id } } }`;
const REVOKE = `mutation($id: ID!) { revokeApiKey(id: $id) { ${KEY_FIELDS} } }`;

/** The form of a new key: its mode and an optional expiry day; the key itself shown once, with a copy button. */
function NewKey({ onCreated }: { onCreated: () => void }) {
  const { t } = usePage();
  const [mode, setMode] = useState<"test" | "live">("test");
  const [expires, setExpires] = useState("");
  const [created, setCreated] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  async function create() {
    const expiresAt = expires ? new Date(`${expires}T23:59:59`).toISOString() : null;
    const result = await client.mutation(CREATE, { mode, expiresAt }).toPromise();
    const key = (result.data as { createApiKey?: { key: string } } | undefined)?.createApiKey?.key;
    setCreated(key ?? null);
    setCopied(false);
    setFailure(key ? null : result.error ? errorMessage(result.error) : t.error);
    if (key) onCreated();
  }
  return (
    <Section id="new-key" title={t.newKey}>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <label>
          {t.keyMode}
          <select value={mode} onChange={(e) => setMode(e.currentTarget.value as "test" | "live")}>
            <option value="test">{t.testMode}</option>
            <option value="live">{t.liveMode}</option>
          </select>
        </label>
        <label>
          {t.expiresOptional}
          <input type="date" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
        </label>
        <button type="submit">{t.createKey}</button>
      </form>
      {failure && <Message ok={false} text={failure} />}
      {created && (
        <div class="created-key" role="status">
          <p class="warning">{t.keyShownOnce}</p>
          <output class="link-url api-key">{created}</output>{" "}
          <button
            type="button"
            class="secondary"
            onClick={() => void navigator.clipboard.writeText(created).then(() => setCopied(true))}
          >
            {copied ? t.copied : t.copy}
          </button>
        </div>
      )}
    </Section>
  );
}

/** The list of keys, each revocable (after a confirmation) until it is revoked. */
function Keys() {
  const { t } = usePage();
  const [{ data, error, fetching }, refetch] = useQuery<{ apiKeys: ApiKey[] }>({ query: API_KEYS });
  const [asking, setAsking] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const reload = () => refetch({ requestPolicy: "network-only" });
  async function revoke(id: string) {
    const result = await client.mutation(REVOKE, { id }).toPromise();
    setAsking(null);
    setFailure(result.error ? errorMessage(result.error) : null);
    reload();
  }
  return (
    <>
      <NewKey onCreated={reload} />
      <Section id="keys" title={t.apiKeys}>
        {failure && <Message ok={false} text={failure} />}
        {!data ? (
          <Pending fetching={fetching} error={error} />
        ) : (
          <Table
            name="api-keys"
            columns={[
              { label: t.prefix },
              { label: t.keyMode },
              { label: t.email },
              { label: t.created },
              { label: t.lastUsed },
              { label: t.expires },
              { label: t.revoked },
              { label: t.actions, hidden: true },
            ]}
            rows={data.apiKeys.map((k) => (
              <tr key={k.id} data-id={k.id}>
                <th scope="row" class="prefix">
                  <code>{k.prefix}…</code>
                </th>
                <td data-label={t.keyMode}>{k.mode === "test" ? t.testMode : t.liveMode}</td>
                <td data-label={t.email}>{k.email}</td>
                <td data-label={t.created} class="date">
                  <DateText value={k.createdAt} />
                </td>
                <td data-label={t.lastUsed} class="date">
                  <DateText value={k.lastUsedAt} />
                </td>
                <td data-label={t.expires} class="date">
                  <DateText value={k.expiresAt} />
                </td>
                <td data-label={t.revoked} class="date revoked">
                  <DateText value={k.revokedAt} />
                </td>
                <td class="row-actions">
                  {!k.revokedAt &&
                    (asking === k.id ? (
                      <Confirm
                        question={t.revokeQuestion(k.prefix)}
                        yes={t.revokeYes}
                        onYes={() => void revoke(k.id)}
                        onNo={() => setAsking(null)}
                      />
                    ) : (
                      <button type="button" class="secondary" onClick={() => setAsking(k.id)}>
                        {t.revoke}
                      </button>
                    ))}
                </td>
              </tr>
            ))}
          />
        )}
      </Section>
    </>
  );
}

export function Developers() {
  const { t } = usePage();
  return (
    <AdminOnly>
      <h1>{t.developers}</h1>
      <Keys />
      <Webhooks />
    </AdminOnly>
  );
}
