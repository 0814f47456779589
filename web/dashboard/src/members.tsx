/**
 * The members page (admins): the organization's members (`members`), inviting one (`inviteMember`, whose one-time
 * link is shown once), changing a role (`updateMemberRole`) and removing a member (`removeMember`, after a
 * confirmation in the page).
 */
import { useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { client, errorMessage } from "./api.js";
import { AdminOnly, Confirm, DateText, Message, Pending, Section, Table, usePage } from "./ui.js";

type Role = "admin" | "finance" | "viewer";
const ROLES: Role[] = ["admin", "finance", "viewer"];

interface Member {
  id: string;
  email: string;
  name: string;
  role: Role;
  lastSignInAt: string | null;
  invitationPending: boolean;
}

const MEMBER_FIELDS = "id email name role lastSignInAt invitationPending";
const MEMBERS = gql`query DashboardMembers { members { ${MEMBER_FIELDS} } }`;
const INVITE = `mutation($email: String!, $name: String, $role: MemberRole!) {
  inviteMember(email: $email, name: $name, role: $role) { inviteUrl expiresAt member { id } } }`;
const UPDATE_ROLE = `mutation($id: ID!, $role: MemberRole!) {
  updateMemberRole(id: $id, role: $role) { ${MEMBER_FIELDS} } }`;
const REMOVE = `mutation($id: ID!) { removeMember(id: $id) { id } }`;

/** The invitation form; the link is shown once (it cannot be read again). */
function Invite({ onInvited }: { onInvited: () => void }) {
  const { t } = usePage();
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [answer, setAnswer] = useState<{ ok: boolean; text: string } | null>(null);
  async function invite() {
    const result = await client.mutation(INVITE, { email, name: name || null, role }).toPromise();
    const url = (result.data as { inviteMember?: { inviteUrl: string } } | undefined)?.inviteMember?.inviteUrl;
    setAnswer(url ? { ok: true, text: url } : { ok: false, text: result.error ? errorMessage(result.error) : t.error });
    if (url) onInvited();
  }
  return (
    <Section id="invite" title={t.inviteMember}>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void invite();
        }}
      >
        <span class="field">
          <label for="invite-email">{t.email}</label>
          <input
            id="invite-email"
            type="email"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </span>
        <span class="field">
          <label for="invite-name">{t.name}</label>
          <input id="invite-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </span>
        <span class="field">
          <label for="invite-role">{t.memberRole}</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {t.role[r]}
              </option>
            ))}
          </select>
        </span>
        <button type="submit">{t.invite}</button>
      </form>
      {answer &&
        (answer.ok ? (
          <p role="status">
            {t.inviteLinkText} <output class="link-url invite-url">{answer.text}</output>
          </p>
        ) : (
          <Message ok={false} text={answer.text} />
        ))}
    </Section>
  );
}

/** A member's row: its role changed in place, its removal after a confirmation. */
function MemberRow({ m, onChanged, onFailed }: { m: Member; onChanged: () => void; onFailed: (e: string) => void }) {
  const { t } = usePage();
  const [asking, setAsking] = useState(false);
  async function run(query: string, variables: Record<string, string>) {
    const result = await client.mutation(query, variables).toPromise();
    setAsking(false);
    onFailed(result.error ? errorMessage(result.error) : "");
    onChanged();
  }
  return (
    <tr data-id={m.id}>
      <th scope="row">{m.email}</th>
      <td data-label={t.name}>{m.name}</td>
      <td data-label={t.memberRole}>
        <select
          aria-label={t.roleOf(m.email)}
          value={m.role}
          onChange={(e) => void run(UPDATE_ROLE, { id: m.id, role: e.currentTarget.value })}
        >
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {t.role[r]}
            </option>
          ))}
        </select>
      </td>
      <td data-label={t.lastSignIn} class="date">
        <DateText value={m.lastSignInAt} />
      </td>
      <td data-label={t.invitation} class="pending">
        {m.invitationPending ? t.pending : t.accepted}
      </td>
      <td class="row-actions">
        {asking ? (
          <Confirm
            question={t.removeQuestion(m.email)}
            yes={t.removeYes}
            onYes={() => void run(REMOVE, { id: m.id })}
            onNo={() => setAsking(false)}
          />
        ) : (
          <button type="button" class="secondary" onClick={() => setAsking(true)}>
            {t.remove}
          </button>
        )}
      </td>
    </tr>
  );
}

function MemberList() {
  const { t } = usePage();
  const [{ data, error, fetching }, refetch] = useQuery<{ members: Member[] }>({ query: MEMBERS });
  const [failure, setFailure] = useState("");
  const reload = () => refetch({ requestPolicy: "network-only" });
  return (
    <>
      <Invite onInvited={reload} />
      <Section id="members" title={t.members}>
        {failure && <Message ok={false} text={failure} />}
        {!data ? (
          <Pending fetching={fetching} error={error} />
        ) : (
          <Table
            name="members"
            columns={[
              { label: t.email },
              { label: t.name },
              { label: t.memberRole },
              { label: t.lastSignIn },
              { label: t.invitation },
              { label: t.actions, hidden: true },
            ]}
            rows={data.members.map((m) => (
              <MemberRow key={m.id} m={m} onChanged={reload} onFailed={setFailure} />
            ))}
          />
        )}
      </Section>
    </>
  );
}

export function Members() {
  const { t } = usePage();
  return (
    <AdminOnly>
      <h1>{t.members}</h1>
      <MemberList />
    </AdminOnly>
  );
}
