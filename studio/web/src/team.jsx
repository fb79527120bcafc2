// Who is signed in, and where: the caller as GET /me describes it, the
// workspaces it sees, the one chosen in the switcher, and the caller's role
// there. Pages read it with useTeam() to hide what the role may not do; the
// server refuses it anyway.
//
// The chosen workspace is remembered in localStorage (an id, not a secret)
// once the user picks one, so that a reload stays there.
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import * as api from './api.js';
import { Dialog, ErrorNote } from './ui.jsx';

export const ROLES = ['viewer', 'editor', 'owner'];

// What each role may do, as the contract's table (§6.2) says; the server
// administrator ranks above every workspace role.
const RANK = { viewer: 1, editor: 2, owner: 3, admin: 4 };

/** allows reports whether a caller with role may do what needs role need. */
export function allows(role, need) {
  return (RANK[role] || 0) >= RANK[need];
}

const STORED = 'decoy.workspace';

function remembered() {
  try {
    return localStorage.getItem(STORED) || '';
  } catch {
    return '';
  }
}

function remember(id) {
  try {
    localStorage.setItem(STORED, id);
  } catch {
    // storage off: the choice lasts until the page does
  }
}

/** items returns the list an answer holds: itself, or its field. */
export function items(answer, field) {
  if (Array.isArray(answer)) return answer;
  return (answer && Array.isArray(answer[field]) && answer[field]) || [];
}

/**
 * describe turns GET /me into {admin, user, key, roles, label}: roles maps
 * each workspace id the caller belongs to to its role there.
 */
export function describe(me) {
  const user = me.user || (me.email ? me : null);
  const key = me.key || null;
  const admin = me.server_admin === true || !!(user && user.server_admin) || me.kind === 'server_admin';
  const roles = new Map();
  for (const m of me.memberships || []) {
    const id = m.workspace ? m.workspace.id : m.workspace_id;
    if (id) roles.set(id, m.role);
  }
  if (key && key.workspace_id) roles.set(key.workspace_id, key.role);
  const label = user ? user.name || user.email : key ? `key ${key.name}` : 'server administrator';
  return { admin, user, key, roles, label };
}

// beforeTeams answers for a server older than teams, which knows neither
// /me nor /workspaces: only its administrator signs in there.
function beforeTeams(e) {
  if (e.status === 404) return { server_admin: true, memberships: [], workspaces: [] };
  throw e;
}

const Team = createContext(null);

/** useTeam returns the signed-in caller's team: see TeamProvider. */
export function useTeam() {
  return useContext(Team);
}

/**
 * TeamProvider loads the caller and its workspaces, then renders children
 * with useTeam() answering:
 *
 *   caller      describe(GET /me)
 *   workspaces  those the caller sees
 *   workspace   the chosen one (null when it sees none)
 *   role        the caller's role there ('admin' for a server admin)
 *   can(need, workspaceId?)  whether the caller has the role need there
 *   switchTo(id), reload()
 */
export function TeamProvider({ children }) {
  const [state, setState] = useState(null);
  const [error, setError] = useState(null);

  const load = useCallback(async (choose) => {
    try {
      const [me, ws] = await Promise.all([api.admin('GET', '/me').catch(beforeTeams), api.admin('GET', '/workspaces').catch(beforeTeams)]);
      const workspaces = items(ws, 'workspaces').slice().sort((a, b) => String(a.name).localeCompare(String(b.name)));
      const want = choose || remembered();
      const current = workspaces.find((w) => w.id === want) || workspaces.find((w) => w.name === 'default') || workspaces[0] || null;
      setState({ caller: describe(me), workspaces, currentID: current ? current.id : '' });
      setError(null);
    } catch (e) {
      setError(e);
    }
  }, []);
  useEffect(() => {
    load();
  }, []);

  if (error) {
    return (
      <main id="main">
        <h1>Decoy Studio</h1>
        <ErrorNote error={error} />
        <button type="button" onClick={() => load()}>Try again</button>
      </main>
    );
  }
  if (!state) return <p class="loading" aria-busy="true">Loading…</p>;

  const { caller, workspaces, currentID } = state;
  const workspace = workspaces.find((w) => w.id === currentID) || null;
  const roleIn = (id) => (caller.admin ? 'admin' : caller.roles.get(id) || '');
  const value = {
    caller,
    workspaces,
    workspace,
    role: workspace ? roleIn(workspace.id) : '',
    roleIn,
    can: (need, id = workspace && workspace.id) => caller.admin || (!!id && allows(roleIn(id), need)),
    switchTo: (id) => {
      remember(id);
      setState({ ...state, currentID: id });
    },
    reload: load,
  };
  return <Team.Provider value={value}>{children}</Team.Provider>;
}

/** NewWorkspace is the dialog in which a server admin names a workspace. */
function NewWorkspace({ onClose }) {
  const team = useTeam();
  const [name, setName] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const ws = await api.admin('POST', '/workspaces', { body: JSON.stringify({ name: name.trim() }) });
      remember(ws.id);
      onClose();
      await team.reload(ws.id);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <Dialog title="New workspace" onClose={onClose} labelledBy="new-workspace-title">
      <form onSubmit={submit} class="stack">
        <p class="hint">A workspace holds projects, members, API keys and its own audit log. It starts with a project named default.</p>
        <div>
          <label for="new-workspace-name">Workspace name</label>
          <input id="new-workspace-name" required maxLength={200} value={name} onInput={(e) => setName(e.target.value)} autofocus />
        </div>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" onClick={onClose}>Cancel</button>
          <button type="submit" class="primary" disabled={busy}>Create workspace</button>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * WorkspaceSwitcher picks the workspace the pages show; a server admin
 * also creates workspaces there.
 */
export function WorkspaceSwitcher() {
  const team = useTeam();
  const [creating, setCreating] = useState(false);
  return (
    <span class="switcher">
      {team.workspaces.length > 0 ? (
        <>
          <label for="workspace-switcher">Workspace</label>
          <select id="workspace-switcher" value={team.workspace ? team.workspace.id : ''} onChange={(e) => team.switchTo(e.target.value)}>
            {team.workspaces.map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
          </select>
        </>
      ) : (
        <span class="hint">No workspace</span>
      )}
      {team.caller.admin && <button type="button" class="icon" aria-label="New workspace" title="New workspace" onClick={() => setCreating(true)}>+</button>}
      {creating && <NewWorkspace onClose={() => setCreating(false)} />}
    </span>
  );
}

/** RoleNote says, on a page, what the caller's role lets it do there. */
export function RoleNote({ need, what, workspaceID }) {
  const team = useTeam();
  const id = workspaceID || (team.workspace && team.workspace.id);
  if (team.can(need, id)) return null;
  const role = id ? team.roleIn(id) : '';
  return (
    <p class="note" data-testid="role-note">
      You are {role ? `a ${role}` : 'not a member'} of this workspace: {what} needs the {need} role.
    </p>
  );
}

/**
 * MainNav is the header's navigation: the pages, those the caller's role
 * may use only, the workspace switcher, who is signed in (a user's name
 * links to its account), and signing out.
 */
export function MainNav({ route, onSignOut }) {
  const team = useTeam();
  const here = (page) => (route.page === page ? 'page' : undefined);
  return (
    <nav aria-label="Main" id="main-nav">
      <a href="#/" aria-current={here('list')}>Mocks</a>
      {team.can('editor') && <a href="#/new" aria-current={here('new')}>New mock</a>}
      {team.can('editor') && <a href="#/generate" aria-current={here('generate')}>Generate</a>}
      {team.can('editor') && <a href="#/transfer" aria-current={here('transfer')}>Import and export</a>}
      {team.workspace && <a href="#/members" aria-current={here('members')}>Members</a>}
      {team.can('owner') && <a href="#/keys" aria-current={here('keys')}>API keys</a>}
      {team.workspace && <a href="#/audit" aria-current={here('audit')}>Audit log</a>}
      <span class="who" data-testid="who">
        {team.caller.user ? <a href="#/account" aria-current={here('account')} title="Your account and personal access tokens">{team.caller.label}</a> : team.caller.label}
        {team.role && team.role !== 'admin' && <span class="badge" data-testid="my-role">{team.role}</span>}
      </span>
      <button type="button" class="link" onClick={onSignOut}>Sign out</button>
    </nav>
  );
}
