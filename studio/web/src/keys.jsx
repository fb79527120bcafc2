// The API keys of the chosen workspace, for scripts and CI (owners only):
// create one with a role, an optional project and an optional expiry, see
// its secret once, see when each was last used, revoke.
import { useEffect, useState } from 'preact/hooks';
import * as api from './api.js';
import { useProjects } from './projects.jsx';
import { RoleNote, items, useTeam } from './team.jsx';
import { ConfirmDialog, CopyButton, Dialog, ErrorNote, Time } from './ui.jsx';

/** secretOf finds the key's secret in the answer that creates it. */
export function secretOf(answer) {
  for (const k of ['key', 'secret', 'token']) {
    if (typeof answer[k] === 'string' && answer[k].startsWith('dcy_key_')) return answer[k];
  }
  return Object.values(answer).find((v) => typeof v === 'string' && v.startsWith('dcy_key_')) || '';
}

/** KeyDialog shows a key's secret once, with how to use it. */
function KeyDialog({ created, onClose }) {
  const example = `curl -H 'Authorization: Bearer ${created.secret}' '${location.origin}/admin/v1/mocks?workspace_id=${created.key.workspace_id}'`;
  return (
    <Dialog title="Store this key now" onClose={onClose} labelledBy="key-title" oneTime>
      <p class="warning">
        This is the only time Decoy shows the key <strong>{created.key.name}</strong>. It is stored hashed and cannot be
        shown again: put it in your CI secrets or a password manager now. If you lose it, revoke it and create another.
      </p>
      <label for="key-value">API key</label>
      <div class="row">
        <input id="key-value" class="mono grow" readonly value={created.secret} onFocus={(e) => e.target.select()} data-testid="key-secret" />
        <CopyButton text={created.secret} />
      </div>
      <p class="hint">Send it as a bearer token to the admin API, as the CLI does with <code>--admin-token</code>:</p>
      <output class="code" aria-label="Example">{example}</output>
      <div class="actions">
        <button type="button" class="primary" onClick={onClose}>I have stored it</button>
      </div>
    </Dialog>
  );
}

function NewKeyForm({ workspaceID, projects, onCreated }) {
  const [name, setName] = useState('');
  const [role, setRole] = useState('viewer');
  const [project, setProject] = useState('');
  const [expires, setExpires] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const today = new Date().toISOString().slice(0, 10);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const body = { name: name.trim(), role };
    if (project) body.project_id = project;
    // The key works until the end of the day chosen, UTC.
    if (expires) body.expires_at = `${expires}T23:59:59Z`;
    try {
      const a = await api.admin('POST', `/workspaces/${workspaceID}/keys`, { body: JSON.stringify(body) });
      const secret = secretOf(a);
      const key = a.key && typeof a.key === 'object' ? a.key : a;
      setName('');
      setExpires('');
      onCreated({ key, secret });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="card stack" aria-labelledby="new-key-title">
      <h2 id="new-key-title">Create a key</h2>
      <div class="fields">
        <div>
          <label for="key-name">Key name</label>
          <input id="key-name" required maxLength={200} placeholder="CI" value={name} onInput={(e) => setName(e.target.value)} />
        </div>
        <div>
          <label for="key-role">Key role</label>
          <select id="key-role" value={role} onChange={(e) => setRole(e.target.value)}>
            <option value="viewer">viewer</option>
            <option value="editor">editor</option>
          </select>
        </div>
        <div>
          <label for="key-project">Key project</label>
          <select id="key-project" value={project} onChange={(e) => setProject(e.target.value)}>
            <option value="">Whole workspace</option>
            {(projects || []).map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        </div>
        <div>
          <label for="key-expires">Expires on (optional)</label>
          <input id="key-expires" type="date" min={today} value={expires} onInput={(e) => setExpires(e.target.value)} aria-describedby="key-expires-hint" />
        </div>
      </div>
      <p class="hint" id="key-expires-hint">A key limited to a project sees nothing else. Without a date the key works until it is revoked; with one, until the end of that day (UTC).</p>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>Create key</button>
      </div>
    </form>
  );
}

export function KeysPage() {
  const team = useTeam();
  const ws = team.workspace;
  const manage = team.can('owner');
  const { projects } = useProjects(manage && ws ? ws.id : '');
  const [keys, setKeys] = useState(null);
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  const [created, setCreated] = useState(null);
  const [revoking, setRevoking] = useState(null);

  const load = () =>
    api.admin('GET', `/workspaces/${ws.id}/keys`).then(
      (a) => setKeys(items(a, 'keys').slice().sort((x, y) => (x.created_at < y.created_at ? 1 : -1))),
      setError,
    );
  useEffect(() => {
    if (!ws || !manage) return;
    setKeys(null);
    setError(null);
    setNote('');
    load();
  }, [ws && ws.id, manage]);

  if (!ws) return <main id="main"><h1>API keys</h1><p>You belong to no workspace yet.</p></main>;
  if (!manage) {
    return (
      <main id="main">
        <h1>API keys of {ws.name}</h1>
        <RoleNote need="owner" what="seeing and managing API keys" />
      </main>
    );
  }
  const projectName = (id) => (id ? ((projects || []).find((p) => p.id === id) || { name: id }).name : 'whole workspace');
  const expired = (k) => k.expires_at && new Date(k.expires_at) <= new Date();

  return (
    <main id="main">
      <h1>API keys of {ws.name}</h1>
      <p class="hint">Keys let scripts and CI call the admin API with a role in this workspace, without a person's password.</p>
      {note && <p class="notice" role="status">{note}</p>}
      <ErrorNote error={error} />
      <NewKeyForm workspaceID={ws.id} projects={projects} onCreated={(c) => { setCreated(c); setNote(`Key ${c.key.name} created.`); load(); }} />
      {!keys && !error && <p aria-busy="true">Loading…</p>}
      {keys && keys.length === 0 && <p>No keys yet.</p>}
      {keys && keys.length > 0 && (
        <table class="mocks keys">
          <caption class="sr-only">API keys, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th><th scope="col">Role</th><th scope="col">Project</th><th scope="col">Expires</th>
              <th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id} data-key={k.name}>
                <td data-label="Name">{k.name}</td>
                <td data-label="Role">{k.role}</td>
                <td data-label="Project">{projectName(k.project_id)}</td>
                <td data-label="Expires">{k.expires_at ? <Time value={k.expires_at} /> : 'never'}{expired(k) && <span class="badge">expired</span>}</td>
                <td data-label="Created"><Time value={k.created_at} /></td>
                <td data-label="Last used" data-testid="key-last-used">{k.last_used_at ? <Time value={k.last_used_at} /> : 'never'}</td>
                <td data-label="Actions">
                  <button type="button" class="danger" aria-label={`Revoke ${k.name}`} onClick={() => setRevoking(k)}>Revoke</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <button type="button" onClick={load}>Refresh</button>
      {created && <KeyDialog created={created} onClose={() => setCreated(null)} />}
      {revoking && (
        <ConfirmDialog title="Revoke this key?" confirm="Revoke" danger onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await api.admin('DELETE', `/workspaces/${ws.id}/keys/${revoking.id}`);
            setNote(`Key ${revoking.name} revoked: it no longer works.`);
            setRevoking(null);
            load();
          }}>
          <p>
            Scripts that use <strong>{revoking.name}</strong> get 401 from now on, on every replica. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </main>
  );
}
