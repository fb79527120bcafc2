// The members of the chosen workspace: everyone sees the list, and the
// invitations not yet accepted; owners invite by email, change roles,
// remove people and revoke invitations. Inviting an email that has no user
// yet gives a single-use link to pass on (Decoy sends no mail), shown once.
import { useEffect, useState } from 'preact/hooks';
import * as api from './api.js';
import { ROLES, RoleNote, items, useTeam } from './team.jsx';
import { ConfirmDialog, CopyButton, Dialog, ErrorNote, Time } from './ui.jsx';

/** InvitationDialog shows an invitation link once. */
function InvitationDialog({ invitation, onClose }) {
  return (
    <Dialog title="Send this invitation link" onClose={onClose} labelledBy="invitation-title" oneTime>
      <p class="warning">
        <strong>{invitation.email}</strong> has no account yet. Decoy sends no mail: pass this link on yourself. It
        works once, for 7 days, and this is the only time it is shown. Whoever opens it sets a name and a password
        and joins as {invitation.role}.
      </p>
      <label for="invitation-url">Invitation link</label>
      <div class="row">
        <input id="invitation-url" class="mono grow" readonly value={invitation.url} onFocus={(e) => e.target.select()} data-testid="invitation-url" />
        <CopyButton text={invitation.url} />
      </div>
      <div class="actions">
        <button type="button" class="primary" onClick={onClose}>Done</button>
      </div>
    </Dialog>
  );
}

function InviteForm({ workspaceID, onInvited }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('viewer');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const a = await api.admin('POST', `/workspaces/${workspaceID}/members`, { body: JSON.stringify({ email: email.trim(), role }) });
      onInvited(a, email.trim(), role);
      setEmail('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="card stack" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <div class="fields">
        <div>
          <label for="invite-email">Email</label>
          <input id="invite-email" type="email" required autocomplete="off" value={email} onInput={(e) => setEmail(e.target.value)} />
        </div>
        <div>
          <label for="invite-role">Role</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value)}>
            {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </div>
      </div>
      <p class="hint">Viewers see everything; editors also change mocks and projects; owners also manage members and API keys.</p>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>Invite</button>
      </div>
    </form>
  );
}

export function MembersPage() {
  const team = useTeam();
  const ws = team.workspace;
  const manage = team.can('owner');
  const [members, setMembers] = useState(null);
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  const [invitation, setInvitation] = useState(null);
  const [removing, setRemoving] = useState(null);
  const [invitations, setInvitations] = useState([]);
  const [revoking, setRevoking] = useState(null);

  const load = () => {
    api.admin('GET', `/workspaces/${ws.id}/invitations`).then((a) => setInvitations(items(a, 'invitations')), setError);
    return api.admin('GET', `/workspaces/${ws.id}/members`).then(
      (a) => setMembers(items(a, 'members').slice().sort((x, y) => String(x.email).localeCompare(String(y.email)))),
      setError,
    );
  };
  useEffect(() => {
    if (!ws) return;
    setMembers(null);
    setInvitations([]);
    setError(null);
    setNote('');
    load();
  }, [ws && ws.id]);

  if (!ws) return <main id="main"><h1>Members</h1><p>You belong to no workspace yet.</p></main>;

  const invited = (a, email, role) => {
    if (a && a.invitation_url) {
      setInvitation({ url: a.invitation_url, email, role });
      setNote(`Invitation for ${email} created.`);
    } else {
      setNote(`${email} is now a member, as ${role}.`);
    }
    load();
  };
  const changeRole = async (m, role) => {
    setError(null);
    setNote('');
    try {
      await api.admin('PATCH', `/workspaces/${ws.id}/members/${m.user_id}`, { body: JSON.stringify({ role }) });
      setNote(`${m.email} is now ${role}.`);
      if (team.caller.user && m.user_id === team.caller.user.id) await team.reload(ws.id);
    } catch (e) {
      setError(e);
    }
    load();
  };
  const me = team.caller.user && team.caller.user.id;

  return (
    <main id="main">
      <h1>Members of {ws.name}</h1>
      <RoleNote need="owner" what="inviting, changing roles and removing members" />
      {note && <p class="notice" role="status">{note}</p>}
      <ErrorNote error={error} />
      {!members && !error && <p aria-busy="true">Loading…</p>}
      {members && members.length === 0 && (
        <p class="empty" data-testid="members-empty">
          {ws.name} has no members yet{invitations.length > 0 ? ': the people invited join when they open their link.' : manage ? ': invite someone below.' : '.'}
        </p>
      )}
      {members && members.length > 0 && (
        <table class="mocks members">
          <caption class="sr-only">Members</caption>
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th>{manage && <th scope="col"><span class="sr-only">Actions</span></th>}</tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.user_id}>
                <td data-label="Name">{m.name || '—'}{m.user_id === me && <span class="badge">you</span>}</td>
                <td data-label="Email">{m.email}</td>
                <td data-label="Role">
                  {manage ? (
                    <select aria-label={`Role of ${m.email}`} value={m.role} onChange={(e) => changeRole(m, e.target.value)}>
                      {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
                    </select>
                  ) : (
                    <span data-testid="member-role">{m.role}</span>
                  )}
                </td>
                {manage && (
                  <td data-label="Actions">
                    <button type="button" class="danger" aria-label={`Remove ${m.email}`} onClick={() => setRemoving(m)}>Remove</button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {invitations.length > 0 && (
        <section aria-labelledby="pending-title" data-testid="pending-invitations">
          <h2 id="pending-title">Pending invitations</h2>
          <table class="mocks members">
            <caption class="sr-only">Pending invitations</caption>
            <thead>
              <tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires</th>{manage && <th scope="col"><span class="sr-only">Actions</span></th>}</tr>
            </thead>
            <tbody>
              {invitations.map((i) => (
                <tr key={i.email}>
                  <td data-label="Email">{i.email}</td>
                  <td data-label="Role">{i.role}</td>
                  <td data-label="Expires"><Time value={i.expires_at} /></td>
                  {manage && (
                    <td data-label="Actions">
                      <button type="button" class="danger" aria-label={`Revoke the invitation of ${i.email}`} onClick={() => setRevoking(i)}>Revoke</button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {manage && <InviteForm workspaceID={ws.id} onInvited={invited} />}
      {revoking && (
        <ConfirmDialog title="Revoke this invitation?" confirm="Revoke" danger onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await api.admin('DELETE', `/workspaces/${ws.id}/invitations/${encodeURIComponent(revoking.email)}`);
            setNote(`The invitation of ${revoking.email} was revoked.`);
            setRevoking(null);
            load();
          }}>
          <p>
            The link sent to <strong>{revoking.email}</strong> stops working at once. You can invite them again.
          </p>
        </ConfirmDialog>
      )}
      {invitation && <InvitationDialog invitation={invitation} onClose={() => setInvitation(null)} />}
      {removing && (
        <ConfirmDialog title="Remove this member?" confirm="Remove" danger onClose={() => setRemoving(null)}
          onConfirm={async () => {
            await api.admin('DELETE', `/workspaces/${ws.id}/members/${removing.user_id}`);
            setNote(`${removing.email} was removed.`);
            const self = removing.user_id === me;
            setRemoving(null);
            if (self) await team.reload();
            else load();
          }}>
          <p>
            <strong>{removing.name || removing.email}</strong> loses access to {ws.name} at once: its mocks, members and
            audit log. Their account stays, and they can be invited again.
          </p>
        </ConfirmDialog>
      )}
    </main>
  );
}
