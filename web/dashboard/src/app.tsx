/**
 * The dashboard (docs/dashboard.md): the member's session decides between the sign-in page and the shell; the
 * invitation link (/dashboard/invite/<token>) shows the set-password page. Inside the shell, routes are in the
 * hash: `#/` the overview, `#/customers`, `#/customers/<id>`, `#/invoices?status=...`, `#/invoices/<id>`,
 * `#/subscriptions?status=...`, `#/subscriptions/<id>`, `#/payments?status=...`, `#/payments/<id>`, `#/orders`,
 * `#/orders/<id>`, `#/creditnotes`, `#/creditnotes/<id>`,
 * and for admins `#/developers` (API keys), `#/members` and `#/settings`.
 */
import { useLayoutEffect, useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { browserLocale, savedLocale, type Locale } from "../../shared/format.js";
import { currentMode, errorMessage, isExpired, post, saveMode, type Mode } from "./api.js";
import { Customer, Customers } from "./customers.js";
import { Developers } from "./developers.js";
import { Document, Documents, type Kind } from "./documents.js";
import { TEXTS, type Texts } from "./i18n.js";
import { Invoice, Invoices } from "./invoices.js";
import { Members } from "./members.js";
import { Overview } from "./overview.js";
import { Payments } from "./payments.js";
import { AcceptInvite, SignIn } from "./sign-in.js";
import { Subscription, Subscriptions } from "./subscriptions.js";
import { lazy, Message, PageContext, useRoute } from "./ui.js";

// pages loaded when first opened (their own scripts)
const Payment = lazy(() => import("./payment.js").then((m) => m.Payment));
const Settings = lazy(() => import("./settings.js").then((m) => m.Settings));

interface Me {
  id: string;
  name: string;
  email: string;
  role: "admin" | "finance" | "viewer";
}

const ME = gql`
  query DashboardMe { me { id name email role } }
`;

/** The page of a route inside the shell. */
function Route() {
  const { path, query } = useRoute();
  const customer = /^\/customers\/([\w-]+)$/.exec(path)?.[1];
  const invoice = /^\/invoices\/([\w-]+)$/.exec(path)?.[1];
  if (customer) return <Customer key={customer} id={customer} />;
  const subscription = /^\/subscriptions\/([\w-]+)$/.exec(path)?.[1];
  if (invoice) return <Invoice key={invoice} id={invoice} />;
  if (subscription) return <Subscription key={subscription} id={subscription} />;
  const payment = /^\/payments\/([\w-]+)$/.exec(path)?.[1];
  if (payment) return <Payment key={payment} id={payment} />;
  const doc = /^\/(orders|creditnotes)\/([\w-]+)$/.exec(path);
  if (doc) return <Document key={doc[2]} kind={doc[1] as Kind} id={doc[2]} />;
  if (path === "/orders" || path === "/creditnotes")
    return <Documents key={path + query.toString()} kind={path.slice(1) as Kind} query={query} />;
  if (path === "/customers") return <Customers />;
  if (path === "/developers") return <Developers />;
  if (path === "/members") return <Members />;
  if (path === "/settings") return <Settings />;
  if (path === "/invoices") return <Invoices key={query.toString()} query={query} />;
  if (path === "/subscriptions") return <Subscriptions key={query.toString()} query={query} />;
  if (path === "/payments") return <Payments key={query.toString()} query={query} />;
  return <Overview to={query.get("to")} />;
}

/** The bar on every page: navigation, the member, the test/live toggle, the language and sign-out. */
function Shell({
  t,
  me,
  mode,
  switchMode,
  switchLocale,
  signOut,
}: {
  t: Texts;
  me: Me;
  mode: Mode;
  switchMode: () => void;
  switchLocale: () => void;
  signOut: () => void;
}) {
  const { path } = useRoute();
  const current = (p: string) => (path === p || path.startsWith(`${p}/`) ? "page" : undefined);
  return (
    <header class={mode === "test" ? "shell test" : "shell"}>
      {mode === "test" && (
        <p class="test-marker" role="note">
          <strong>{t.testData}</strong> {t.testDataText}
        </p>
      )}
      <div class="bar">
        <nav aria-label={t.nav}>
          <a href="#/" aria-current={path === "/" ? "page" : undefined}>
            {t.overview}
          </a>
          <a href="#/customers" aria-current={current("/customers")}>
            {t.customers}
          </a>
          <a href="#/invoices" aria-current={current("/invoices")}>
            {t.invoices}
          </a>
          <a href="#/subscriptions" aria-current={current("/subscriptions")}>
            {t.subscriptions}
          </a>
          <a href="#/payments" aria-current={current("/payments")}>
            {t.payments}
          </a>
          <a href="#/orders" aria-current={current("/orders")}>
            {t.orders}
          </a>
          <a href="#/creditnotes" aria-current={current("/creditnotes")}>
            {t.creditNotes}
          </a>
          {me.role === "admin" && (
            <>
              <a href="#/developers" aria-current={current("/developers")}>
                {t.developers}
              </a>
              <a href="#/members" aria-current={current("/members")}>
                {t.members}
              </a>
              <a href="#/settings" aria-current={current("/settings")}>
                {t.settings}
              </a>
            </>
          )}
        </nav>
        <span class="bar-actions">
          <span class="member">
            {me.name} · <span class="role">{t.role[me.role]}</span>
          </span>
          <button
            type="button"
            class="mode"
            aria-pressed={mode === "live"}
            aria-label={t.switchMode(mode === "test" ? t.liveMode : t.testMode)}
            onClick={switchMode}
          >
            {t.mode}: {mode === "test" ? t.testMode : t.liveMode}
          </button>
          <button type="button" class="link" onClick={switchLocale} lang={t.switchTo === "English" ? "en" : "es"}>
            {t.switchTo}
          </button>
          <button type="button" class="link" onClick={signOut}>
            {t.signOut}
          </button>
        </span>
      </div>
    </header>
  );
}

export function App() {
  const [locale, setLocale] = useState<Locale>(() => savedLocale("dashboard-locale") ?? browserLocale());
  const [mode, setMode] = useState<Mode>(currentMode);
  const [{ data, error, fetching }, refetch] = useQuery<{ me: Me | null }>({ query: ME });
  const invite = /^\/dashboard\/invite\/([^/]+)$/.exec(location.pathname)?.[1];
  const [inviting, setInviting] = useState(!!invite);
  const t = TEXTS[locale];
  useLayoutEffect(() => {
    document.documentElement.lang = locale;
    document.title = t.title;
  }, [locale, t]);
  const signedIn = () => {
    // the invitation's token leaves the address (and the history); a deep link's hash stays
    history.replaceState(null, "", `/dashboard/${location.hash}`);
    setInviting(false);
    refetch({ requestPolicy: "network-only" });
  };
  const me = data?.me;
  const page = { t, locale, role: me?.role ?? null, canWrite: !!me && me.role !== "viewer" };
  let body;
  if (inviting && invite) body = <AcceptInvite token={invite} onSignedIn={signedIn} />;
  else if (me)
    body = (
      <>
        <Shell
          t={t}
          me={me}
          mode={mode}
          switchMode={() => {
            const next: Mode = mode === "test" ? "live" : "test";
            saveMode(next);
            setMode(next);
          }}
          switchLocale={() => {
            const next: Locale = locale === "es" ? "en" : "es";
            localStorage.setItem("dashboard-locale", next);
            setLocale(next);
          }}
          signOut={async () => {
            await post("/dashboard/api/sign-out");
            refetch({ requestPolicy: "network-only" });
          }}
        />
        {/* keyed by the mode: every page reads its data again after the toggle */}
        <main key={mode}>
          <Route />
        </main>
      </>
    );
  else if (!data && fetching) body = <p>{t.loading}</p>;
  else if (data || isExpired(error)) body = <SignIn onSignedIn={signedIn} />;
  else body = <Message ok={false} text={error ? errorMessage(error) : t.error} />;
  return <PageContext.Provider value={page}>{body}</PageContext.Provider>;
}
