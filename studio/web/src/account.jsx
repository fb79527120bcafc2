// The signed-in user's account: who it is, its personal access tokens
// (GET /admin/v1/me/tokens) with their names, creation, expiry and last
// use, each revoked after asking (DELETE /admin/v1/me/tokens/{id}), and a
// new password (PUT /admin/v1/me/password), which ends every session and
// token of the user, this one included. The server admin signed in with
// the admin token has no account here.
import { useEffect, useState } from 'preact/hooks';
import * as api from './api.js';
import { items, useTeam } from './team.jsx';
import { ConfirmDialog, ErrorNote, Time, formatTime } from './ui.jsx';

export function AccountPage() {
  const team = useTeam();
  const user = team.caller.user;
  const [tokens, setTokens] = useState(null);
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  const [revoking, setRevoking] = useState(null);

  const load = () =>
    api.admin('GET', '/me/tokens').then(
      (a) => {
        setTokens(items(a, 'tokens'));
        setError(null);
      },
      setError,
    );
  useEffect(() => {
    if (!user) return;
    setTokens(null);
    load();
  }, [user && user.id]);

  if (!user) {
    return (
      <main id="main">
        <h1>Your account</h1>
        <p>You are signed in with the admin token: the server administrator has no account of its own, and no personal access tokens.</p>
      </main>
    );
  }
  return (
    <main id="main">
      <h1>Your account</h1>
      <p data-testid="account-who">
        Signed in as <strong>{user.name || user.email}</strong> ({user.email}){user.server_admin && <span class="badge">server admin</span>}
      </p>
      <section aria-labelledby="tokens-title">
        <h2 id="tokens-title">Personal access tokens</h2>
        <p class="hint">
          A personal access token acts as you in the admin API and the CLI (<code>decoy login</code> makes one) for 90 days, until
          it is revoked, or until your password changes: a new password revokes them all. Their secrets are never shown again.
        </p>
        {note && <p class="notice" role="status">{note}</p>}
        <ErrorNote error={error} />
        {!tokens && !error && <p aria-busy="true">Loading…</p>}
        {tokens && tokens.length === 0 && <p data-testid="no-tokens">You have no personal access tokens.</p>}
        {tokens && tokens.length > 0 && (
          <table class="mocks tokens">
            <caption class="sr-only">Your personal access tokens, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th>
                <th scope="col"><span class="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr key={t.id} data-token={t.id}>
                  <td data-label="Name">{t.name}{t.current && <span class="badge">current</span>}</td>
                  <td data-label="Created"><Time value={t.created_at} /></td>
                  <td data-label="Expires"><Time value={t.expires_at} /></td>
                  <td data-label="Last used" data-testid="token-last-used">{t.last_used_at ? <Time value={t.last_used_at} /> : 'never'}</td>
                  <td data-label="Actions">
                    <button type="button" class="danger" aria-label={`Revoke ${t.name}, created ${formatTime(t.created_at)}`} onClick={() => setRevoking(t)}>Revoke</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <button type="button" onClick={load}>Refresh</button>
      </section>
      <PasswordForm />
      {revoking && (
        <ConfirmDialog title="Revoke this token?" confirm="Revoke" danger onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await api.admin('DELETE', `/me/tokens/${revoking.id}`);
            setNote(`Token ${revoking.name} revoked: it no longer works.`);
            setRevoking(null);
            load();
          }}>
          <p>
            Scripts and command lines that use <strong>{revoking.name}</strong> get 401 from now on, on every replica. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </main>
  );
}

// PasswordForm changes the user's own password, given the current one.
// The server then ends this session with the others: the Studio goes back
// to its sign-in page, saying why.
function PasswordForm() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    if (!current) {
      setError({ message: 'Fill in your current password.' });
      return;
    }
    if (next.length < api.MIN_PASSWORD) {
      setError({ message: `The new password needs at least ${api.MIN_PASSWORD} characters.` });
      return;
    }
    if (next !== again) {
      setError({ message: 'The two new passwords differ.' });
      return;
    }
    setBusy(true);
    try {
      await api.admin('PUT', '/me/password', { body: JSON.stringify({ current_password: current, password: next }) });
    } catch (err) {
      setError(err);
      setBusy(false);
      return;
    }
    setCurrent('');
    setNext('');
    setAgain('');
    api.sessionEnded('Your password is changed, and every session and personal access token of yours has ended: sign in with the new password.');
  };
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form onSubmit={submit} class="card stack" noValidate>
        <p class="hint">A new password ends every session of yours, this one included, and revokes all your personal access tokens.</p>
        <div>
          <label for="password-current">Current password</label>
          <input id="password-current" type="password" required autocomplete="current-password" value={current}
            onInput={(e) => { setCurrent(e.target.value); setError(null); }} />
        </div>
        <div>
          <label for="password-new">New password</label>
          <input id="password-new" type="password" required minLength={api.MIN_PASSWORD} autocomplete="new-password" value={next}
            onInput={(e) => { setNext(e.target.value); setError(null); }} aria-describedby="password-new-hint" />
          <p class="hint" id="password-new-hint">At least {api.MIN_PASSWORD} characters.</p>
        </div>
        <div>
          <label for="password-again">Repeat the new password</label>
          <input id="password-again" type="password" required autocomplete="new-password" value={again}
            onInput={(e) => { setAgain(e.target.value); setError(null); }} />
        </div>
        <ErrorNote error={error} />
        <button class="primary" type="submit" disabled={busy}>Change password</button>
      </form>
    </section>
  );
}
