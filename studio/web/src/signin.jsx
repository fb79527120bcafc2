// The sign-in page: a person signs in with an email and a password, the
// server administrator with the admin token. Either is exchanged for a
// session cookie and kept nowhere in the browser.
import { useState } from 'preact/hooks';
import * as api from './api.js';
import { ErrorNote } from './ui.jsx';
import { Logo } from './logo.jsx';

export function SignIn({ onSignedIn, notice, email: initialEmail = '' }) {
  const [email, setEmail] = useState(initialEmail);
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    const byToken = token.trim() !== '';
    const byPassword = email.trim() !== '' || password !== '';
    if (byToken === byPassword) {
      setError({ message: byToken ? 'Fill in your email and password, or the admin token: not both.' : 'Fill in your email and password, or the admin token.' });
      return;
    }
    setBusy(true);
    try {
      await api.signIn(byToken ? { token: token.trim() } : { email: email.trim(), password });
      setToken('');
      setPassword('');
      onSignedIn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <h1><Logo />Decoy Studio</h1>
      {notice && <p class="notice" role="status">{notice}</p>}
      <form onSubmit={submit} class="card" noValidate>
        <label for="signin-email">Email</label>
        <input id="signin-email" type="email" autocomplete="username" value={email} onInput={(e) => setEmail(e.target.value)} />
        <label for="signin-password">Password</label>
        <input id="signin-password" type="password" autocomplete="current-password" value={password} onInput={(e) => setPassword(e.target.value)} />
        <fieldset class="admin-token">
          <legend>Or, the server administrator</legend>
          <label for="admin-token">Admin token</label>
          <input id="admin-token" type="password" autocomplete="off" value={token}
            onInput={(e) => setToken(e.target.value)} placeholder="dcy_admin_…" aria-describedby="admin-token-hint" />
          <p class="hint" id="admin-token-hint">
            The token <code>decoy serve</code> printed at its first start, or the one set with <code>--admin-token</code>.
          </p>
        </fieldset>
        <ErrorNote error={error} />
        <button class="primary" type="submit" disabled={busy}>Sign in</button>
      </form>
    </main>
  );
}
