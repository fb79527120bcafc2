// The signed-in user's account: who it is, and its personal access tokens
// (GET /admin/v1/me/tokens) with their names, creation, expiry and last
// use, each revoked after asking (DELETE /admin/v1/me/tokens/{id}). The
// server admin signed in with the admin token has no account here.
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
