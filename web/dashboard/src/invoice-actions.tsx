/**
 * An invoice's actions and history (docs/dashboard.md "Invoices"), loaded with the invoice's page when first needed
 * (its own script): for members who may write, the actions a finalized invoice's state allows, each asked in the
 * page first and done through the API's mutations (errors shown as the API words them):
 * - record a payment: `createPayment` of the invoice (an amount up to what is due) charged at once to one of the
 *   customer's sources (`authorizePayment`); declined, the payment stays with the gateway's reason;
 * - send a reminder: `sendReminder` to the customer's e-mail, with a subject and message the member may change;
 * - credit it: a credit note (`createCreditNote`, then `finalizeCreditNote`) of one line of a net amount (SII CodRef 3,
 *   "corrects amounts"), or voiding the whole invoice: a credit note copying its lines (CodRef 1), as SII's rules
 *   void a finalized DTE (a finalized invoice is never deleted);
 * - mark it uncollectible (`markInvoiceUncollectible`) while something is due.
 * A draft is finalized on the invoice's page itself. The history: the invoice's events (`events` filtered by
 * `object`), newest first.
 */
import { useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { client, errorMessage } from "./api.js";
import { isZero } from "../../shared/format.js";
import {
  Confirm,
  DateTimeText,
  Message,
  nodes,
  Pending,
  Section,
  sourceLabel,
  Table,
  usePage,
  type Currency,
  type Edges,
} from "./ui.js";

/** What the actions read of the invoice, beyond the page's own query. */
interface ActionFacts {
  id: string;
  number: number | null;
  document: { name: string };
  currency: Currency;
  amountDue: string;
  paymentStatus: string;
  discount: string;
  discountScheme: string;
  customer: {
    email: string | null;
    sources: { id: string; gateway: string; status: string; isDefault: boolean; data: Record<string, unknown> }[];
  };
  lines: {
    name: string;
    description: string | null;
    quantity: string;
    amount: string;
    discount: string;
    discountScheme: string;
    exempt: boolean;
  }[];
}

const FACTS = gql`
  query DashboardInvoiceActions($id: ID!) {
    node(id: $id) {
      ... on Invoice {
        id number document { name } currency { id decimals } amountDue paymentStatus discount discountScheme
        customer { id email sources { id gateway status isDefault data } }
        lines { id name description quantity amount discount discountScheme exempt }
      }
    }
  }
`;

const CREATE_PAYMENT = `mutation($input: PaymentInput!) { createPayment(input: $input) { id } }`;
const AUTHORIZE = `mutation($id: ID!, $source: ID!) {
  authorizePayment(id: $id, source: $source) { id status failureReason } }`;
const REMIND = `mutation($input: ReminderInput!) { sendReminder(input: $input) { id } }`;
const CREDIT = `mutation($input: CreditNoteInput!) { createCreditNote(input: $input) { id } }`;
const FINALIZE_CREDIT = `mutation($id: ID!) { finalizeCreditNote(id: $id) { id number } }`;
const UNCOLLECTIBLE = `mutation($id: ID!) { markInvoiceUncollectible(id: $id) { id paymentStatus } }`;

type Action = "pay" | "remind" | "credit" | "void" | "uncollectible";
type Outcome = { ok: boolean; text: string } | null;

/** A mutation's answer: its data, or the API's error (its message, naming the field) as a thrown Error. */
async function mutate<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const result = await client.mutation(query, variables).toPromise();
  if (result.error) throw new Error(errorMessage(result.error));
  return result.data as T;
}

/** The actions a finalized invoice's state allows, for members who may write; `done` reads the invoice again. */
export function InvoiceActions({ id, done }: { id: string; done: () => void }) {
  const { t } = usePage();
  const [{ data, error, fetching }, refetch] = useQuery<{ node: ActionFacts | null }>({
    query: FACTS,
    variables: { id },
  });
  const [open, setOpen] = useState<Action | null>(null);
  const [asking, setAsking] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [busy, setBusy] = useState(false);
  // the forms' values
  const [amount, setAmount] = useState("");
  const [source, setSource] = useState("");
  const [subject, setSubject] = useState("");
  const [message, setMessage] = useState("");
  const [creditAmount, setCreditAmount] = useState("");
  const [creditReason, setCreditReason] = useState("");
  if (!data) return <Pending fetching={fetching} error={error} />;
  const i = data.node;
  if (!i) return null;
  const due = !isZero(i.amountDue);
  const sources = i.customer.sources.filter((s) => s.status === "chargeable");
  const title = `${i.document.name} ${i.number ?? ""}`.trim();
  const allowed: Action[] = [];
  if (due) allowed.push("pay", "remind", "credit", "void");
  if (due && i.paymentStatus !== "uncollectible") allowed.push("uncollectible");

  function choose(action: Action) {
    setOpen(action);
    setAsking(action === "void" || action === "uncollectible");
    setOutcome(null);
    if (action === "pay") {
      setAmount(i!.amountDue);
      setSource((sources.find((s) => s.isDefault) ?? sources[0])?.id ?? "");
    }
    if (action === "remind") {
      setSubject(t.reminderSubject(title));
      setMessage(t.reminderMessage(title));
    }
  }

  async function run(action: Action) {
    setAsking(false);
    setBusy(true);
    let result: Outcome;
    try {
      result = { ok: true, text: await perform(action) };
    } catch (e) {
      result = { ok: false, text: (e as Error).message };
    }
    setBusy(false);
    setOutcome(result);
    if (result.ok) setOpen(null);
    refetch({ requestPolicy: "network-only" });
    done();
  }

  /** Does the action through the API; the words of its success, or throws the API's error. */
  async function perform(action: Action): Promise<string> {
    const inv = i!;
    switch (action) {
      case "pay": {
        const { createPayment } = await mutate<{ createPayment: { id: string } }>(CREATE_PAYMENT, {
          input: { invoice: inv.id, amount: amount.trim() },
        });
        const { authorizePayment: p } = await mutate<{
          authorizePayment: { status: string; failureReason: string | null };
        }>(AUTHORIZE, { id: createPayment.id, source });
        if (p.status === "requires_payment_method") throw new Error(t.paymentDeclined(p.failureReason ?? ""));
        return t.paymentRecorded(t.paymentState[p.status] ?? p.status);
      }
      case "remind":
        await mutate(REMIND, {
          input: { invoice: inv.id, recipients: inv.customer.email ? [inv.customer.email] : [], subject, message },
        });
        return t.reminderSent(inv.customer.email ?? "");
      case "credit":
      case "void": {
        const lines =
          action === "void"
            ? inv.lines.map(({ name, description, quantity, amount, discount, discountScheme, exempt }) => ({
                name,
                description,
                quantity,
                amount,
                discount,
                discountScheme,
                exempt,
              }))
            : [{ name: creditReason.trim() || t.creditLineName(title), quantity: "1", amount: creditAmount.trim() }];
        const input =
          action === "void"
            ? { invoice: inv.id, lines, discount: inv.discount, discountScheme: inv.discountScheme, referenceCode: 1 }
            : { invoice: inv.id, lines };
        const { createCreditNote } = await mutate<{ createCreditNote: { id: string } }>(CREDIT, { input });
        try {
          await mutate(FINALIZE_CREDIT, { id: createCreditNote.id });
        } catch (e) {
          // the draft stays (the API's two steps): say where it is
          throw new Error(`${(e as Error).message} (${t.creditNoteDraft(createCreditNote.id)})`);
        }
        return action === "void" ? t.invoiceVoided : t.creditNoteIssued;
      }
      case "uncollectible":
        await mutate(UNCOLLECTIBLE, { id: inv.id });
        return t.markedUncollectible;
    }
  }

  const field = (name: string, label: string, value: string, set: (v: string) => void, extra = {}) => (
    <span class="field">
      <label for={`action-${name}`}>{label}</label>
      <input id={`action-${name}`} value={value} onInput={(e) => set(e.currentTarget.value)} {...extra} />
    </span>
  );

  return (
    <div class="actions-bar invoice-actions">
      {outcome && <Message ok={outcome.ok} text={outcome.text} />}
      {allowed.length > 0 && (
        <p class="action-buttons">
          {allowed.map((a) => (
            <button
              key={a}
              type="button"
              class={open === a ? undefined : "secondary"}
              aria-expanded={open === a}
              disabled={busy}
              onClick={() => choose(a)}
            >
              {t.invoiceAction[a]}
            </button>
          ))}
        </p>
      )}
      {open && (
        <form
          class="filters action-form"
          aria-label={t.invoiceAction[open]}
          onSubmit={(e) => {
            e.preventDefault();
            setAsking(true);
          }}
        >
          {open === "pay" &&
            (sources.length === 0 ? (
              <p>{t.noChargeableSource}</p>
            ) : (
              <>
                {field("amount", t.amountIn(i.currency.id), amount, setAmount, {
                  inputMode: "decimal",
                  required: true,
                })}
                <span class="field">
                  <label for="action-source">{t.source}</label>
                  <select id="action-source" value={source} onChange={(e) => setSource(e.currentTarget.value)}>
                    {sources.map((s) => (
                      <option key={s.id} value={s.id}>
                        {sourceLabel(s.gateway, s)}
                      </option>
                    ))}
                  </select>
                </span>
              </>
            ))}
          {open === "remind" && (
            <>
              <p>
                {t.recipient}: {i.customer.email ?? t.noEmail}
              </p>
              {field("subject", t.subject, subject, setSubject, { required: true })}
              <span class="field">
                <label for="action-message">{t.messageText}</label>
                <textarea
                  id="action-message"
                  rows={3}
                  value={message}
                  onInput={(e) => setMessage(e.currentTarget.value)}
                />
              </span>
            </>
          )}
          {open === "credit" && (
            <>
              {field("credit-amount", t.creditNet(i.currency.id), creditAmount, setCreditAmount, {
                inputMode: "decimal",
                required: true,
              })}
              {field("credit-reason", t.creditReason, creditReason, setCreditReason, {
                placeholder: t.creditLineName(title),
              })}
            </>
          )}
          {(open === "void" || open === "uncollectible") && <p>{t.invoiceAsk[open]}</p>}
          {asking ? (
            <Confirm
              question={
                open === "pay"
                  ? t.payAsk(amount, i.currency.id)
                  : open === "credit"
                    ? t.creditAsk(creditAmount, i.currency.id)
                    : t.invoiceAsk[open]
              }
              yes={t.invoiceAction[open]}
              onYes={() => void run(open)}
              onNo={() => setOpen(null)}
            />
          ) : (
            !(open === "pay" && sources.length === 0) && (
              <button type="submit" disabled={busy}>
                {t.continue}
              </button>
            )
          )}
        </form>
      )}
    </div>
  );
}

interface EventRow {
  id: string;
  type: string;
  created: string;
}

const HISTORY = gql`
  query DashboardInvoiceHistory($id: String!) {
    events(first: 50, where: { object: { equals: $id } }) { edges { node { id type created } } }
  }
`;

/** The invoice's history: its events (created, finalized, paid, ...), newest first, the latest 50. */
export function InvoiceHistory({ id }: { id: string }) {
  const { t } = usePage();
  const [{ data, error, fetching }] = useQuery<{ events: Edges<EventRow> }>({
    query: HISTORY,
    variables: { id },
    requestPolicy: "cache-and-network",
  });
  return (
    <Section id="history" title={t.history}>
      {!data ? (
        <Pending fetching={fetching} error={error} />
      ) : (
        <Table
          name="history"
          columns={[{ label: t.date }, { label: t.event }]}
          rows={nodes(data.events).map((e) => (
            <tr key={e.id} data-id={e.id}>
              <th scope="row" class="date">
                <DateTimeText value={e.created} />
              </th>
              <td data-label={t.event} class="event-type">
                {t.eventName[e.type] ?? e.type}
              </td>
            </tr>
          ))}
        />
      )}
    </Section>
  );
}
