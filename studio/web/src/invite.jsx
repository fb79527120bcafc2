// The page an invitation link opens, #/invite/<secret>: the person sets a
// name and a password, and is signed in. The secret is the only credential;
// it is sent to the admin API without any session, and dropped from the
// address bar once used.
import { useEffect, useState } from 'preact/hooks';
import * as api from './api.js';
import { ErrorNote } from './ui.jsx';
import { Logo } from './logo.jsx';

/**
 * InvitationPage accepts the invitation secret; onSignedIn runs once the
 * new member is signed in, onSignIn(email) when they must sign in
 * themselves.
 */
export function InvitationPage({ secret, onSignedIn, onSignIn }) {
  const [inv, setInv] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const path = `/invitations/${encodeURIComponent(secret)}`;

  useEffect(() => {
    api.anonymous('GET', path).then(setInv, setLoadError);
  }, [secret]);

  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    if (!name.trim()) {
      setError({ message: 'Fill in your name.' });
      return;
    }
    if (password.length < api.MIN_PASSWORD) {
      setError({ message: `The password needs at least ${api.MIN_PASSWORD} characters.` });
      return;
    }
    if (password !== again) {
      setError({ message: 'The two passwords differ.' });
      return;
    }
    setBusy(true);
    let user;
    try {
      const a = await api.anonymous('POST', path + '/accept', { name: name.trim(), password });
      user = (a && a.user) || {};
      // The answer signs the new member in for scripts too, with a
      // personal access token; Studio signs in with a session instead,
      // so that token ends here rather than lasting 90 days unused.
      if (a && typeof a.token === 'string') api.revokeAccessToken(a.token).catch(() => {});
    } catch (err) {
      setError(err);
      setBusy(false);
      return;
    }
    const email = user.email || (inv && inv.email) || '';
    let signedIn = false;
    try {
      await api.signIn({ email, password });
      signedIn = true;
    } catch {
      // the account is made all the same: the sign-in page says so
    }
    setPassword('');
    setAgain('');
    // Used: the link opens nothing any more, so it leaves the history.
    location.replace('#/');
    if (signedIn) onSignedIn();
    else onSignIn(email);
  };

  const ws = inv && (inv.workspace ? inv.workspace.name : inv.workspace_name);
  return (
    <main id="main" class="signin">
      <h1><Logo />Join Decoy</h1>
      {loadError && (
        <>
          <ErrorNote error={loadError} />
          <p>The link may have been used already, or be older than 7 days: ask for a new invitation.</p>
          <p><a href="#/">Go to the sign-in page</a></p>
        </>
      )}
      {!inv && !loadError && <p aria-busy="true">Loading…</p>}
      {inv && (
        <form onSubmit={submit} class="card stack" aria-labelledby="join-title" noValidate>
          <h2 id="join-title">
            {ws ? <>You are invited to <strong>{ws}</strong></> : 'You are invited'}
            {inv.role ? ` as ${inv.role}` : ''}
          </h2>
          {inv.email && <p>Your account: <strong data-testid="invited-email">{inv.email}</strong></p>}
          <div>
            <label for="join-name">Your name</label>
            <input id="join-name" required maxLength={200} autocomplete="name" value={name} onInput={(e) => setName(e.target.value)} />
          </div>
          <div>
            <label for="join-password">New password</label>
            <input id="join-password" type="password" required minLength={api.MIN_PASSWORD} autocomplete="new-password" value={password}
              onInput={(e) => { setPassword(e.target.value); setError(null); }} aria-describedby="join-password-hint" />
            <p class="hint" id="join-password-hint">At least {api.MIN_PASSWORD} characters.</p>
          </div>
          <div>
            <label for="join-again">Repeat the password</label>
            <input id="join-again" type="password" required autocomplete="new-password" value={again} onInput={(e) => { setAgain(e.target.value); setError(null); }} />
          </div>
          <ErrorNote error={error} />
          <button class="primary" type="submit" disabled={busy}>Join and sign in</button>
        </form>
      )}
    </main>
  );
}
