/**
 * The pages before a session: sign-in (e-mail and password) and the invitation link's page, where the invited
 * person sets a password (POST /dashboard/api/invites/<token>, which signs in too).
 */
import { useState } from "preact/hooks";
import { post } from "./api.js";
import { Message, usePage } from "./ui.js";

/** A form of the sign-in pages: its fields, a submit button and the service's error. */
function useSubmit(done: () => void) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (run: () => Promise<string | null>) => {
    setBusy(true);
    setError(null);
    const failed = await run();
    setBusy(false);
    if (failed) setError(failed);
    else done();
  };
  return { error, busy, submit, setError };
}

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const { t } = usePage();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const { error, busy, submit } = useSubmit(onSignedIn);
  return (
    <main class="narrow">
      <h1>{t.signInTitle}</h1>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void submit(() => post("/dashboard/api/sign-in", { email, password }));
        }}
      >
        <label for="sign-in-email">{t.email}</label>
        <input
          id="sign-in-email"
          type="email"
          autocomplete="username"
          required
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <label for="sign-in-password">{t.password}</label>
        <input
          id="sign-in-password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <div>
          <button type="submit" disabled={busy}>
            {t.signIn}
          </button>
        </div>
        {error && <Message ok={false} text={error} />}
      </form>
    </main>
  );
}

export function AcceptInvite({ token, onSignedIn }: { token: string; onSignedIn: () => void }) {
  const { t } = usePage();
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const { error, busy, submit, setError } = useSubmit(onSignedIn);
  return (
    <main class="narrow">
      <h1>{t.inviteTitle}</h1>
      <p>{t.inviteText}</p>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          if (password !== again) return setError(t.passwordsDiffer);
          // the token as the address has it (base62: nothing to decode); sent back as it came
          void submit(() => post(`/dashboard/api/invites/${token}`, { password }));
        }}
      >
        <label for="invite-password">{t.password}</label>
        <input
          id="invite-password"
          type="password"
          autocomplete="new-password"
          minLength={12}
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <label for="invite-password-again">{t.passwordAgain}</label>
        <input
          id="invite-password-again"
          type="password"
          autocomplete="new-password"
          minLength={12}
          required
          value={again}
          onInput={(e) => setAgain(e.currentTarget.value)}
        />
        <div>
          <button type="submit" disabled={busy}>
            {t.setPassword}
          </button>
        </div>
        {error && <Message ok={false} text={error} />}
      </form>
    </main>
  );
}
