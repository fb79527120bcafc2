// Decoy Studio: sign in, list, create, edit, query and watch mocks.
import { render } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import * as api from './api.js';
import { checkJSON, createEditor, format } from './editor.js';
import { OPERATORS, SHOWN_HEADERS, buildQuery, curl, fetchSnippet, forgetSavedQuery, recentQueries, rememberQuery, saveQuery, savedQueries } from './playground.js';
import { Chart } from './chart.jsx';
import { VersionsTab } from './versions.jsx';
import { GeneratedData, GeneratePage, TemplateBadge } from './generate.jsx';
import { ImportExportPage } from './importexport.jsx';
import { ConfirmDialog, CopyButton, Dialog, ErrorNote, Time, UploadProgress, forgetUnsaved, formatBytes, formatNumber, go, hasUnsaved, tooLarge, useUnsaved } from './ui.jsx';
import { SignIn } from './signin.jsx';
import { MainNav, RoleNote, TeamProvider, useTeam } from './team.jsx';
import { MocksPage, ProjectPage, ProjectSelect } from './projects.jsx';
import { Sidebar } from './sidebar.jsx';
import { MembersPage } from './members.jsx';
import { KeysPage } from './keys.jsx';
import { AuditPage } from './audit.jsx';
import { AccountPage } from './account.jsx';
import { InvitationPage } from './invite.jsx';
import { Logo } from './logo.jsx';
import './style.css';

// Tokens shown this visit, by mock id, so that the playground can use the
// one just created or rotated. Memory only: gone when the page is.
const knownTokens = new Map();

// ---- routing: #/ (mocks), #/projects/{id}[/routes|/requests], #/new[/{project}],
// #/mocks/{id}/{tab}, #/members, #/keys, #/audit, #/account,
// #/invite/{secret}

const TEAM_PAGES = ['members', 'keys', 'audit'];

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (parts[0] === 'new') return { page: 'new', project: parts[1] || '' };
  if (parts[0] === 'generate') return { page: 'generate', id: parts[1] };
  if (parts[0] === 'transfer') return { page: 'transfer' };
  if (parts[0] === 'mocks' && parts[1]) return { page: 'mock', id: parts[1], tab: parts[2] || 'data' };
  if (parts[0] === 'projects' && parts[1]) return { page: 'list', project: parts[1], tab: ['routes', 'requests'].includes(parts[2]) ? parts[2] : 'mocks' };
  if (TEAM_PAGES.includes(parts[0])) return { page: parts[0] };
  if (parts[0] === 'account') return { page: 'account' };
  if (parts[0] === 'invite' && parts[1]) return { page: 'invite', secret: parts[1] };
  return { page: 'list', project: '' };
}

/**
 * useRoute follows the hash. Leaving a page with unsaved edits (see
 * useUnsaved) puts the old hash back and returns the one asked for as
 * leaving, until leave or stay says what to do.
 */
function useRoute() {
  const [route, setRoute] = useState(parseRoute);
  const [leaving, setLeaving] = useState(null);
  const current = useRef(location.hash);
  useEffect(() => {
    const on = () => {
      if (location.hash === current.current) return;
      if (hasUnsaved()) {
        const to = location.hash;
        history.replaceState(null, '', current.current || '#/');
        setLeaving(to);
        return;
      }
      current.current = location.hash;
      setRoute(parseRoute());
    };
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  const leave = () => {
    const to = leaving;
    setLeaving(null);
    forgetUnsaved();
    location.hash = to;
  };
  return { route, leaving, leave, stay: () => setLeaving(null) };
}

/** TokenDialog shows a mock token once, with a copy button. */
function TokenDialog({ token, mock, onClose }) {
  return (
    <Dialog title="Store this token now" onClose={onClose} labelledBy="token-title" oneTime>
      <p class="warning">
        This is the only time Decoy shows the token of <strong>{mock.name || mock.id}</strong>. It is stored
        hashed and cannot be shown again: copy it to your app or a password manager now. If you lose it,
        rotate the token.
      </p>
      <label for="token-value">Token</label>
      <div class="row">
        <input id="token-value" class="mono grow" readonly value={token} onFocus={(e) => e.target.select()} data-testid="token" />
        <CopyButton text={token} />
      </div>
      <p class="hint">
        Send it in the <code>decoyauthtoken</code> header (or <code>serviceauthtoken</code>, or the{' '}
        <code>auth_token</code> query parameter).
      </p>
      <div class="actions">
        <button type="button" class="primary" onClick={onClose}>I have stored it</button>
      </div>
    </Dialog>
  );
}

// ---- the JSON editor as a component

function JSONEditor({ initial, onChange, label, editorRef, isJSON = true, id }) {
  const host = useRef(null);
  useEffect(() => {
    const ed = createEditor(host.current, { doc: initial, onChange, label, isJSON });
    if (editorRef) editorRef.current = ed;
    return () => {
      ed.destroy();
      if (editorRef && editorRef.current === ed) editorRef.current = null;
    };
  }, []);
  return <div class="editor" ref={host} id={id} />;
}

/** Validity shows whether the text is JSON, and where it is not. */
function Validity({ text, editorRef, isJSON = true }) {
  if (!isJSON) return <p class="validity">Not JSON ({'stored as is'}).</p>;
  const err = checkJSON(text);
  if (!err) {
    let what = 'Valid JSON';
    try {
      const v = JSON.parse(text);
      if (Array.isArray(v)) what += ` · an array of ${v.length} record${v.length === 1 ? '' : 's'}`;
    } catch {
      // checked above
    }
    return <p class="validity ok" role="status" data-testid="validity">{what}</p>;
  }
  return (
    <p class="validity bad" role="status" data-testid="validity">
      Invalid JSON at line {err.line}, column {err.column}: {err.message}{' '}
      {editorRef && <button type="button" class="link" onClick={() => editorRef.current.focusAt(err.from)}>Go to error</button>}
    </p>
  );
}

// ---- new mock

function NewMock({ project: initialProject, onToken }) {
  const team = useTeam();
  const [project, setProject] = useState(initialProject);
  const [name, setName] = useState('');
  const [priv, setPriv] = useState(false);
  const [text, setText] = useState('[\n  {"id": 1, "name": "Ada"}\n]\n');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const editor = useRef(null);
  // A file too large for the editor is sent as it is, unread.
  const [file, setFile] = useState(null);
  const [progress, setProgress] = useState(null);
  const valid = file !== null || checkJSON(text) === null;

  const upload = async (e) => {
    const f = e.target.files[0];
    setError(null);
    setFile(null);
    if (!f) return;
    const why = tooLarge(f, await api.maxDataBytes());
    if (why) {
      e.target.value = '';
      setError(new Error(why));
      return;
    }
    if (!name) setName(f.name.replace(/\.json$/i, ''));
    if (f.size > EDITOR_MAX_BYTES) {
      setFile(f);
      return;
    }
    const t = await f.text();
    editor.current.text = t;
    setText(t);
  };
  const submit = async (e) => {
    e.preventDefault();
    if (!valid) return;
    setBusy(true);
    setError(null);
    try {
      const inProject = project ? `&project_id=${encodeURIComponent(project)}` : '';
      const m = await api.upload('POST', `/mocks?name=${encodeURIComponent(name)}&private=${priv}${inProject}`, file || text, { onProgress: setProgress });
      if (m.token) {
        knownTokens.set(m.id, m.token);
        onToken(m.token, m);
      }
      go(`#/mocks/${m.id}`);
    } catch (err) {
      setError(err);
      setBusy(false);
      setProgress(null);
    }
  };
  return (
    <main id="main">
      <h1>New mock</h1>
      <RoleNote need="editor" what="creating mocks" />
      <form onSubmit={submit} class="stack">
        <div class="fields">
          <ProjectSelect value={project} onChange={setProject} />
          <div>
            <label for="new-name">Name</label>
            <input id="new-name" value={name} maxLength={200} onInput={(e) => setName(e.target.value)} />
          </div>
          <div class="check">
            <input id="new-private" type="checkbox" checked={priv} onChange={(e) => setPriv(e.target.checked)} />
            <label for="new-private">Private (needs a token, shown once)</label>
          </div>
          <div>
            <label for="new-file">Or load a file</label>
            <input id="new-file" type="file" accept=".json,application/json" onChange={upload} />
          </div>
        </div>
        {file && (
          <p class="notice" data-testid="file-as-is">
            {file.name} is {formatBytes(file.size)}: too large to edit here, it is sent as it is.{' '}
            <button type="button" class="link" onClick={() => setFile(null)}>Use the editor instead</button>
          </p>
        )}
        <div hidden={!!file}>
          <p class="field-label" id="new-data-label">Data (JSON)</p>
          <p class="hint">Paste or type JSON, load a file, or start from a template on the <a href="#/generate">Generate</a> page or an OpenAPI document on the <a href="#/transfer">Import</a> page.</p>
          <JSONEditor initial={text} onChange={setText} label="Mock data (JSON)" editorRef={editor} id="new-data" />
          {!file && <Validity text={text} editorRef={editor} />}
        </div>
        <div class="actions">
          {!file && <button type="button" onClick={() => { const f = format(editor.current.text); if (f) { editor.current.text = f; setText(f); } }} disabled={!valid}>Format</button>}
          <button type="submit" class="primary" disabled={!valid || busy}>Create mock</button>
        </div>
        <UploadProgress progress={progress} />
        <ErrorNote error={error} />
      </form>
    </main>
  );
}

// ---- one mock

const TABS = [
  ['data', 'Data'],
  ['settings', 'Settings'],
  ['playground', 'Playground'],
  ['usage', 'Usage'],
  ['versions', 'Versions'],
];

function MockPage({ id, tab, onToken, onProject }) {
  const [mock, setMock] = useState(null);
  const [error, setError] = useState(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const team = useTeam();
  const load = useCallback(() => api.admin('GET', `/mocks/${id}`).then((m) => { setMock(m); onProject(m.project_id || ''); }, setError), [id]);
  useEffect(() => {
    setMock(null);
    setError(null);
    load();
  }, [id]);
  const showToken = (token, m) => {
    knownTokens.set(m.id, token);
    onToken(token, m);
  };

  if (error) return <main id="main"><ErrorNote error={error} /><a href="#/">Back to the mocks</a></main>;
  if (!mock) return <main id="main"><p aria-busy="true">Loading…</p></main>;
  return (
    <main id="main">
      <div class="title-row">
        <h1 data-testid="mock-name">{mock.name || '(unnamed)'}</h1>
        {team.can('editor', mock.workspace_id) && <button type="button" class="danger" onClick={() => setConfirmDelete(true)}>Delete</button>}
      </div>
      <p class="url">
        <span class="mono" data-testid="mock-url">{mock.url}</span> <CopyButton text={mock.url} label="Copy URL" />
        {mock.private && <span class="badge">private</span>}
        {mock.template_mode && <TemplateBadge mode={mock.template_mode} />}
      </p>
      <nav class="tabs" aria-label="Mock sections">
        {TABS.map(([key, label]) => (
          <a key={key} href={`#/mocks/${id}/${key}`} aria-current={tab === key ? 'page' : undefined}>{label}</a>
        ))}
      </nav>
      {tab === 'data' && (mock.template_mode === 'always' ? <GeneratedData mock={mock} /> : <DataTab mock={mock} onSaved={setMock} />)}
      {tab === 'settings' && <SettingsTab mock={mock} onSaved={setMock} onToken={showToken} />}
      {tab === 'playground' && <Playground mock={mock} />}
      {tab === 'usage' && <UsageTab mock={mock} />}
      {tab === 'versions' && <VersionsTab mock={mock} onRestored={setMock} {...{ ConfirmDialog, ErrorNote, formatBytes, formatTime: timeOf }} />}
      {confirmDelete && (
        <ConfirmDialog title="Delete this mock?" confirm="Delete" danger onClose={() => setConfirmDelete(false)}
          onConfirm={async () => { await api.admin('DELETE', `/mocks/${id}`); knownTokens.delete(id); forgetUnsaved(); go('#/'); }}>
          <p>
            <strong>{mock.name || mock.id}</strong> and its data go at once; its URL answers 404 from then on. This
            cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </main>
  );
}

/** timeOf shows a time as the Versions tab wants it: see Time. */
const timeOf = (s) => <Time value={s} />;

function isJSONType(ct) {
  const mt = (ct || '').split(';')[0].trim().toLowerCase();
  return mt === 'application/json' || mt.endsWith('+json');
}

/**
 * EDITOR_MAX_BYTES is the largest document the Data tab opens in the
 * editor: above it, the editor takes seconds to open and typing lags
 * (measured in Chromium: see README), so the document opens read-only,
 * with a download and a replace-with-a-file instead.
 */
const EDITOR_MAX_BYTES = 5 * 1024 * 1024;

/** ReplaceWithFile uploads a file as the mock's new data, with progress. */
function ReplaceWithFile({ mock, onSaved, onNote }) {
  const [progress, setProgress] = useState(null);
  const [error, setError] = useState(null);
  const pick = async (e) => {
    const f = e.target.files[0];
    e.target.value = '';
    if (!f) return;
    setError(null);
    const why = tooLarge(f, await api.maxDataBytes());
    if (why) return setError(new Error(why));
    try {
      const m = await api.upload('PUT', `/mocks/${mock.id}/data`, f, { contentType: mock.content_type, onProgress: setProgress });
      onSaved(m);
      onNote(`Replaced with ${f.name}: the next read gets the new data.`);
    } catch (err) {
      setError(err);
    } finally {
      setProgress(null);
    }
  };
  return (
    <div class="replace-file">
      <label for="data-file">Replace with a file</label>
      <input id="data-file" type="file" onChange={pick} disabled={!!progress} />
      <UploadProgress progress={progress} />
      <ErrorNote error={error} />
    </div>
  );
}

/**
 * LiveBar says whether the live data (§12.2) is the current version's or
 * was changed since by writes through routes, and offers Refresh and, to
 * editors, Reset and Save as version: each asks first (see DataTab).
 * Unsaved edits in the editor hold them back, as the live data would
 * replace the edits.
 */
function LiveBar({ live, current, editable, dirty, busy, onRefresh, onAsk }) {
  const since = current ? `version ${current}` : 'the current version';
  return (
    <div class="live-bar">
      {live === 'changed' && (
        <p class="warning" role="status" data-testid="live-note">
          <strong>Live data: changed by writes through routes since {since}.</strong>{' '}
          Every read sees it as it is now; no version keeps it until it is saved as one.
        </p>
      )}
      {live === 'version' && (
        <p class="note" role="status" data-testid="live-note">
          <strong>Live data: {current ? `version ${current}` : 'the current version'}, unchanged.</strong>{' '}
          Writes through routes (POST, PUT, PATCH, DELETE) change it without making a version.
        </p>
      )}
      <div class="actions">
        <button type="button" onClick={onRefresh} disabled={dirty || busy}>Refresh</button>
        {editable && <button type="button" onClick={() => onAsk('reset')} disabled={dirty || busy || live !== 'changed'}>Reset</button>}
        {editable && <button type="button" onClick={() => onAsk('snapshot')} disabled={dirty || busy || live !== 'changed'}>Save as version</button>}
      </div>
      {dirty && <p class="hint">Save or revert your edits to refresh, reset or save the live data.</p>}
    </div>
  );
}

/** LiveDialog asks before a Reset or a Save as version of the live data. */
function LiveDialog({ what, mock, current, onClose, onConfirm }) {
  const name = <strong>{mock.name || mock.id}</strong>;
  const since = current ? `version ${current}` : 'the current version';
  if (what === 'reset') {
    return (
      <ConfirmDialog title="Reset the live data?" confirm="Reset" danger onClose={onClose} onConfirm={onConfirm}>
        <p>
          The live data of {name} goes back to {since}: what writes through routes added, changed or deleted since is
          lost, and the next read gets {since}. To keep it, save it as a version first.
        </p>
      </ConfirmDialog>
    );
  }
  return (
    <ConfirmDialog title="Save the live data as a version?" confirm="Save as version" onClose={onClose} onConfirm={onConfirm}>
      <p>
        The live data of {name}, with what writes through routes changed since {since}, is kept as a new version: the
        current one, which Reset goes back to. {since[0].toUpperCase() + since.slice(1)} stays in the versions.
      </p>
    </ConfirmDialog>
  );
}

function DataTab({ mock, onSaved }) {
  const big = mock.size > EDITOR_MAX_BYTES;
  const [anyway, setAnyway] = useState(false);
  const [text, setText] = useState(null);
  const [saved, setSaved] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState('');
  const [progress, setProgress] = useState(null);
  const editor = useRef(null);
  const json = isJSONType(mock.content_type);
  const editable = useTeam().can('editor', mock.workspace_id);
  const reading = !big || anyway;
  const [replaced, setReplaced] = useState(0);
  // The live data's state (§12.2): 'version' or 'changed', and the number
  // of the current version; asking is the confirmation shown ('reset',
  // 'snapshot' or 'overwrite').
  const [live, setLive] = useState('');
  const [current, setCurrent] = useState(null);
  const [asking, setAsking] = useState(null);
  const [refreshing, setRefreshing] = useState(false);
  useUnsaved('data', text !== null && text !== saved);

  // load reads the live data (the headers only when it is too large to
  // open) and the versions, for the number of the current one. The editor
  // gets the new text only when it differs, so that a refresh that finds
  // nothing new keeps the cursor where it was. Of loads that overlap (the
  // tab shown while a refresh runs), the last one started is shown.
  const loads = useRef(0);
  const load = useCallback(async () => {
    const n = ++loads.current;
    setRefreshing(true);
    try {
      const [d, vs] = await Promise.all([
        api.liveData(mock.id, { headOnly: !reading }),
        api.admin('GET', `/mocks/${mock.id}/versions`),
      ]);
      if (n !== loads.current) return;
      const cur = (vs.versions || []).find((v) => v.current);
      setCurrent(cur ? cur.version : null);
      setLive(d.live);
      if (reading) {
        if (editor.current && editor.current.text !== d.text) editor.current.text = d.text;
        setText(d.text);
        setSaved(d.text);
      }
      setError(null);
    } catch (e) {
      if (n === loads.current) setError(e);
    } finally {
      if (n === loads.current) setRefreshing(false);
    }
  }, [mock.id, reading]);
  // Read afresh each time the tab opens (it mounts), when the data is
  // replaced with a file, and when the large document is opened anyway.
  useEffect(() => {
    setText(null);
    load();
  }, [load, replaced]);
  // And when the browser tab is shown again (back from the app that
  // writes), unless edits would be lost.
  const dirtyNow = useRef(false);
  dirtyNow.current = text !== null && text !== saved;
  useEffect(() => {
    const shown = () => {
      if (document.visibilityState === 'visible' && !dirtyNow.current) load();
    };
    document.addEventListener('visibilitychange', shown);
    return () => document.removeEventListener('visibilitychange', shown);
  }, [load]);

  const reset = async () => {
    const m = await api.admin('POST', `/mocks/${mock.id}/reset`);
    setAsking(null);
    onSaved(m);
    await load();
    setNote(`Reset: the live data is ${current ? `version ${current}` : 'the current version'} again.`);
  };
  const snapshot = async () => {
    const v = await api.admin('POST', `/mocks/${mock.id}/versions`);
    setAsking(null);
    onSaved(await api.admin('GET', `/mocks/${mock.id}`));
    await load();
    setNote(<>Saved as version {v.version}, now the current one: see <a href={`#/mocks/${mock.id}/versions`}>Versions</a>.</>);
  };
  const liveBar = (dirty) => (
    <LiveBar live={live} current={current} editable={editable} dirty={dirty} busy={refreshing}
      onRefresh={() => { setNote(''); load(); }} onAsk={setAsking} />
  );
  const liveDialog = (asking === 'reset' || asking === 'snapshot') && (
    <LiveDialog what={asking} mock={mock} current={current} onClose={() => setAsking(null)}
      onConfirm={asking === 'reset' ? reset : snapshot} />
  );
  const download = async () => {
    setError(null);
    try {
      const blob = await api.admin('GET', `/mocks/${mock.id}/data`, { raw: 'blob' });
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = `${mock.name || mock.id}${json ? '.json' : ''}`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    } catch (e) {
      setError(e);
    }
  };
  if (!reading) {
    return (
      <section aria-label="Data">
        <div class="card large-doc" data-testid="large-doc">
          <h2>Too large to edit here</h2>
          <p>
            This document is {formatBytes(mock.size)}: above {formatBytes(EDITOR_MAX_BYTES)}, the editor takes seconds to
            open and typing lags. Download it, edit it with a tool made for large files, and replace it with the file.
          </p>
          <div class="actions">
            <button type="button" class="primary" onClick={download}>Download</button>
            <button type="button" onClick={() => setAnyway(true)}>Open in the editor anyway</button>
          </div>
        </div>
        {liveBar(false)}
        {liveDialog}
        {editable && <ReplaceWithFile mock={mock} onSaved={(m) => { onSaved(m); setReplaced((n) => n + 1); }} onNote={setNote} />}
        {note && <p class="notice" role="status" data-testid="data-note">{note}</p>}
        <ErrorNote error={error} />
      </section>
    );
  }
  if (error && text === null) return <ErrorNote error={error} />;
  if (text === null) return <p aria-busy="true">Loading…</p>;
  const valid = !json || checkJSON(text) === null;
  // save writes the editor's text as the data. Unless sure, it first checks
  // that the live data is still what the editor was loaded with: writes
  // through routes since would be lost, so it asks first.
  const save = async (sure) => {
    setBusy(true);
    setError(null);
    setNote('');
    try {
      if (sure !== true) {
        const now = await api.liveData(mock.id);
        if (now.text !== saved) {
          setLive(now.live);
          setAsking('overwrite');
          return;
        }
      }
      const m = await api.upload('PUT', `/mocks/${mock.id}/data`, text, { contentType: mock.content_type, onProgress: setProgress });
      setSaved(text);
      onSaved(m);
      // The saved text is the live data and a new current version.
      await load();
      setNote('Saved: the next read gets the new data.');
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
      setProgress(null);
    }
  };
  const dirty = text !== saved;
  return (
    <section aria-label="Data">
      {liveBar(dirty)}
      <p class="hint">Stored as <code>{mock.content_type}</code>, {formatBytes(new TextEncoder().encode(saved).length)}. Ctrl-F searches, Ctrl-Shift-[ folds, Tab leaves the editor.</p>
      <JSONEditor initial={text} onChange={setText} label="Mock data" editorRef={editor} isJSON={json} id="data-editor" />
      <Validity text={text} editorRef={editor} isJSON={json} />
      {!editable && <RoleNote need="editor" what="changing the data" workspaceID={mock.workspace_id} />}
      {editable && <div class="actions">
        {dirty && <span class="unsaved" data-testid="unsaved">Unsaved changes</span>}
        {json && <button type="button" disabled={!valid} onClick={() => { const f = format(editor.current.text); if (f) { editor.current.text = f; setText(f); } }}>Format</button>}
        <button type="button" disabled={!dirty} onClick={() => { editor.current.text = saved; setText(saved); }}>Revert</button>
        <button type="button" class="primary" disabled={!valid || busy || !dirty} onClick={save}>Save data</button>
      </div>}
      <UploadProgress progress={progress} label="Saving" />
      {editable && <ReplaceWithFile mock={mock} onSaved={(m) => { onSaved(m); setReplaced((n) => n + 1); }} onNote={setNote} />}
      {note && <p class="notice" role="status" data-testid="data-note">{note}</p>}
      <ErrorNote error={error} />
      {liveDialog}
      {asking === 'overwrite' && (
        <ConfirmDialog title="Replace the changed live data?" confirm="Save my edits" danger onClose={() => setAsking(null)}
          onConfirm={async () => { setAsking(null); await save(true); }}>
          <p>
            Since this tab read it, the live data of <strong>{mock.name || mock.id}</strong> changed (writes through
            routes, or another save). Saving your edits replaces it; what it replaces is kept as a version, which
            the Versions tab can restore. To see those changes first, copy your edits, revert, and refresh.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}

function limitValue(v) {
  return v === null || v === undefined ? '' : String(v);
}

/** patchOf is what the settings form changes of mock: the PATCH body. */
function patchOf(f, mock) {
  const patch = {};
  if (f.name !== mock.name) patch.name = f.name;
  if (f.private !== mock.private) patch.private = f.private;
  if (Number(f.status) !== mock.status) patch.status = Number(f.status);
  if (Number(f.delay_ms) !== mock.delay_ms) patch.delay_ms = Number(f.delay_ms);
  for (const k of ['rate_limit', 'monthly_quota']) {
    const v = f[k].trim() === '' ? null : Number(f[k]);
    if (v !== mock[k]) patch[k] = v;
  }
  return patch;
}

function SettingsTab({ mock, onSaved, onToken }) {
  const [f, setF] = useState(() => ({
    name: mock.name, private: mock.private, status: String(mock.status), delay_ms: String(mock.delay_ms),
    rate_limit: limitValue(mock.rate_limit), monthly_quota: limitValue(mock.monthly_quota),
  }));
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const set = (k) => (e) => setF({ ...f, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });
  const editable = useTeam().can('editor', mock.workspace_id);

  const patch = patchOf(f, mock);
  useUnsaved('settings', Object.keys(patch).length > 0);
  // The server's defaults, as this mock's usage gives them when it has none
  // of its own: said in the placeholders.
  const [defaults, setDefaults] = useState(null);
  useEffect(() => {
    api.admin('GET', `/mocks/${mock.id}/usage`).then(setDefaults, () => setDefaults(null));
  }, [mock.id]);
  const [confirmRotate, setConfirmRotate] = useState(false);
  const placeholder = (own, limit, unit) => {
    if (!defaults || own !== null && own !== undefined) return 'server default';
    return limit ? `server default: ${formatNumber(limit)} ${unit}` : 'server default: unlimited';
  };

  const save = async (e) => {
    e.preventDefault();
    if (Object.keys(patch).length === 0) {
      setNote('Nothing changed.');
      return;
    }
    setBusy(true);
    setError(null);
    setNote('');
    try {
      const m = await api.admin('PATCH', `/mocks/${mock.id}`, { body: JSON.stringify(patch) });
      onSaved(m);
      if (m.token) onToken(m.token, m);
      if (patch.private === false) knownTokens.delete(mock.id);
      setNote('Settings saved.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const rotate = async () => {
    setError(null);
    const m = await api.admin('POST', `/mocks/${mock.id}/token`);
    setConfirmRotate(false);
    onSaved(m);
    onToken(m.token, m);
    setNote('New token issued: the old one no longer works.');
  };
  return (
    <section aria-label="Settings">
      {!editable && <RoleNote need="editor" what="changing the settings" workspaceID={mock.workspace_id} />}
      <form onSubmit={save} class="stack">
        <fieldset class="plain stack" disabled={!editable}>
        <div class="fields">
          <div>
            <label for="s-name">Name</label>
            <input id="s-name" value={f.name} maxLength={200} onInput={set('name')} />
          </div>
          <div class="check">
            <input id="s-private" type="checkbox" checked={f.private} onChange={set('private')} />
            <label for="s-private">Private (needs a token)</label>
          </div>
          <div>
            <label for="s-status">Status</label>
            <input id="s-status" type="number" min="200" max="599" required value={f.status} onInput={set('status')} />
          </div>
          <div>
            <label for="s-delay">Delay (ms)</label>
            <input id="s-delay" type="number" min="0" max="30000" required value={f.delay_ms} onInput={set('delay_ms')} />
          </div>
          <div>
            <label for="s-rate">Rate limit per minute</label>
            <input id="s-rate" type="number" min="0" max="1000000" placeholder={placeholder(mock.rate_limit, defaults && defaults.minute.limit, 'a minute')} value={f.rate_limit} onInput={set('rate_limit')} aria-describedby="limits-hint" />
          </div>
          <div>
            <label for="s-quota">Monthly quota</label>
            <input id="s-quota" type="number" min="0" placeholder={placeholder(mock.monthly_quota, defaults && defaults.month.limit, 'a month')} value={f.monthly_quota} onInput={set('monthly_quota')} aria-describedby="limits-hint" />
          </div>
        </div>
        <p class="hint" id="limits-hint">Empty: the server default. 0: unlimited.</p>
        <div class="actions">
          {editable && <button type="submit" class="primary" disabled={busy}>Save settings</button>}
        </div>
        </fieldset>
      </form>
      {mock.private && editable && (
        <div class="card">
          <h2>Token</h2>
          <p>The token was shown once, when it was issued. A new one replaces it at once: apps that use the old one get 401.</p>
          <button type="button" onClick={() => setConfirmRotate(true)}>Rotate token</button>
        </div>
      )}
      {confirmRotate && (
        <ConfirmDialog title="Rotate the token?" confirm="Rotate token" danger onClose={() => setConfirmRotate(false)} onConfirm={rotate}>
          <p>
            Apps using the current token of <strong>{mock.name || mock.id}</strong> will get 401 at once. The new token is
            shown once: have somewhere to store it.
          </p>
        </ConfirmDialog>
      )}
      {note && <p class="notice" role="status">{note}</p>}
      <ErrorNote error={error} />
    </section>
  );
}

// ---- playground

let rowKey = 0;
const newRow = () => ({ key: ++rowKey, path: '', op: '$eq', value: '' });

// The playground's state by mock id, so that leaving for another tab and
// coming back finds the query and the last answer as they were. Memory
// only, as the tokens.
const playgrounds = new Map();

function Playground({ mock }) {
  const kept = playgrounds.get(mock.id) || {};
  const [rows, setRows] = useState(() => kept.rows || [newRow()]);
  const [orderBy, setOrderBy] = useState(kept.orderBy || '');
  const [direction, setDirection] = useState(kept.direction || 'asc');
  const [offset, setOffset] = useState(kept.offset || '');
  const [limit, setLimit] = useState(kept.limit || '');
  const [token, setToken] = useState(() => knownTokens.get(mock.id) || '');
  const [result, setResult] = useState(kept.result || null);
  const [busy, setBusy] = useState(false);
  const [runs, setRuns] = useState(kept.runs || 0);
  const [recent, setRecent] = useState(() => recentQueries(mock.id));
  const [saved, setSaved] = useState(() => savedQueries(mock.id));
  const [saveName, setSaveName] = useState('');
  useEffect(() => {
    playgrounds.set(mock.id, { rows, orderBy, direction, offset, limit, result, runs });
  }, [mock.id, rows, orderBy, direction, offset, limit, result, runs]);
  const form = { filters: rows, orderBy, direction, offset, limit };
  const restore = (f) => {
    setRows(f.filters.length ? f.filters.map((r) => ({ ...r, key: ++rowKey })) : [newRow()]);
    setOrderBy(f.orderBy || '');
    setDirection(f.direction || 'asc');
    setOffset(f.offset || '');
    setLimit(f.limit || '');
  };
  const save = (e) => {
    e.preventDefault();
    const name = saveName.trim();
    if (!name) return;
    saveQuery(mock.id, name, form);
    setSaved(savedQueries(mock.id));
    setSaveName('');
  };

  const query = buildQuery({ filters: rows, orderBy, direction, offset, limit });
  const url = mock.url + (query ? '?' + query : '');
  const sendToken = mock.private ? token.trim() : '';
  const setRow = (key, k, v) => setRows(rows.map((r) => (r.key === key ? { ...r, [k]: v } : r)));

  const run = async (e) => {
    e && e.preventDefault();
    setBusy(true);
    // Same origin, whatever host the public URL names; no cookie.
    const u = new URL(url);
    const headers = sendToken ? { decoyauthtoken: sendToken } : {};
    const started = performance.now();
    try {
      const res = await fetch(u.pathname + u.search, { headers, credentials: 'omit', cache: 'no-store' });
      const body = await res.text();
      let shown = body;
      if ((res.headers.get('Content-Type') || '').includes('json')) {
        try {
          shown = JSON.stringify(JSON.parse(body), null, 2);
        } catch {
          // shown as sent
        }
      }
      setResult({
        status: res.status, statusText: res.statusText, body: shown, ms: Math.round(performance.now() - started),
        headers: SHOWN_HEADERS.map((h) => [h, res.headers.get(h)]).filter(([, v]) => v !== null),
      });
    } catch (err) {
      setResult({ status: 0, statusText: 'Network error', body: String(err), headers: [], ms: 0 });
    } finally {
      setBusy(false);
      setRuns((n) => n + 1);
      rememberQuery(mock.id, form);
      setRecent(recentQueries(mock.id));
    }
  };

  return (
    <section aria-label="Query playground" class="playground">
      <div class="pg-input">
      <form onSubmit={run} class="stack">
        <fieldset>
          <legend>Filters (all must hold)</legend>
          {rows.map((r, i) => (
            <div class="filter-row" key={r.key}>
              <div>
                <label for={`f-path-${r.key}`}>Path {i + 1}</label>
                <input id={`f-path-${r.key}`} class="mono" placeholder="address.city" value={r.path} onInput={(e) => setRow(r.key, 'path', e.target.value)} />
              </div>
              <div>
                <label for={`f-op-${r.key}`}>Operator {i + 1}</label>
                <select id={`f-op-${r.key}`} value={r.op} onChange={(e) => setRow(r.key, 'op', e.target.value)}>
                  {OPERATORS.map((o) => <option key={o.value} value={o.value}>{o.value} ({o.label})</option>)}
                </select>
              </div>
              <div>
                <label for={`f-value-${r.key}`}>Value {i + 1}</label>
                <input id={`f-value-${r.key}`} class="mono" placeholder="Paris" value={r.value} onInput={(e) => setRow(r.key, 'value', e.target.value)} />
              </div>
              <button type="button" class="icon" aria-label={`Remove filter ${i + 1}`} onClick={() => setRows(rows.length > 1 ? rows.filter((x) => x.key !== r.key) : [newRow()])}>✕</button>
            </div>
          ))}
          <button type="button" onClick={() => setRows([...rows, newRow()])}>Add filter</button>
        </fieldset>
        <div class="fields">
          <div>
            <label for="p-order">Order by</label>
            <input id="p-order" class="mono" placeholder="age" value={orderBy} onInput={(e) => setOrderBy(e.target.value)} />
          </div>
          <div>
            <label for="p-direction">Direction</label>
            <select id="p-direction" value={direction} onChange={(e) => setDirection(e.target.value)}>
              <option value="asc">asc</option>
              <option value="desc">desc</option>
            </select>
          </div>
          <div>
            <label for="p-offset">Offset</label>
            <input id="p-offset" inputMode="numeric" placeholder="default: 0" value={offset} onInput={(e) => setOffset(e.target.value)} />
          </div>
          <div>
            <label for="p-limit">Limit</label>
            <input id="p-limit" inputMode="numeric" placeholder="default: all" value={limit} onInput={(e) => setLimit(e.target.value)} />
          </div>
          {mock.private && (
            <div class="grow">
              <label for="p-token">Mock token</label>
              <input id="p-token" class="mono" type="password" autocomplete="off" placeholder="dcy_…" value={token} onInput={(e) => setToken(e.target.value)} />
            </div>
          )}
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>Send request</button>
        </div>
      </form>
      <form class="save-query row" onSubmit={save}>
        <div class="grow">
          <label for="p-save-name">Save this query as</label>
          <input id="p-save-name" value={saveName} maxLength={80} placeholder="adults in Paris" onInput={(e) => setSaveName(e.target.value)} />
        </div>
        <button type="submit" disabled={!saveName.trim()}>Save query</button>
      </form>
      {saved.length > 0 && (
        <div class="queries">
          <h2 id="saved-title">Saved queries</h2>
          <ul aria-labelledby="saved-title" data-testid="saved-queries">
            {saved.map((q) => (
              <li key={q.name}>
                <button type="button" class="link" onClick={() => restore(q.form)} title={q.query ? '?' + q.query : 'no parameters'}>{q.name}</button>
                <button type="button" class="icon" aria-label={`Forget ${q.name}`} onClick={() => { forgetSavedQuery(mock.id, q.name); setSaved(savedQueries(mock.id)); }}>✕</button>
              </li>
            ))}
          </ul>
        </div>
      )}
      {recent.length > 0 && (
        <div class="queries">
          <h2 id="recent-title">Recent requests</h2>
          <ul aria-labelledby="recent-title" data-testid="recent-queries">
            {recent.map((h) => (
              <li key={h.query + h.at}>
                <button type="button" class="link mono" onClick={() => restore(h.form)}>{h.query ? '?' + h.query : '(no parameters)'}</button>
                {' '}<span class="hint"><Time value={h.at} /></span>
              </li>
            ))}
          </ul>
        </div>
      )}
      </div>

      <div class="pg-output">
      <h2>Request</h2>
      <div class="snippet">
        <label for="p-url">URL</label>
        <div class="row"><output id="p-url" class="code grow" data-testid="request-url">{url}</output><CopyButton text={url} /></div>
      </div>
      <div class="snippet">
        <label for="p-curl">curl</label>
        <div class="row"><output id="p-curl" class="code grow" data-testid="curl">{curl(url, sendToken)}</output><CopyButton text={curl(url, sendToken)} /></div>
      </div>
      <div class="snippet">
        <label for="p-fetch">fetch</label>
        <div class="row"><output id="p-fetch" class="code grow pre" tabindex="0">{fetchSnippet(url, sendToken)}</output><CopyButton text={fetchSnippet(url, sendToken)} /></div>
      </div>

      <h2>Response</h2>
      <div aria-live="polite" data-testid="response" data-runs={runs}>
        {!result && <p class="hint">Send the request to see the answer.</p>}
        {result && (
          <>
            <p class={`status s${String(result.status)[0]}`}>
              <span data-testid="response-status">{result.status} {result.statusText}</span>
              {result.ms ? <span class="hint"> · {result.ms} ms</span> : null}
            </p>
            {result.headers.length > 0 && (
              <dl class="headers" data-testid="response-headers">
                {result.headers.map(([k, v]) => (
                  <div key={k}><dt>{k}</dt><dd class="mono" data-header={k}>{v}</dd></div>
                ))}
              </dl>
            )}
            <pre class="code body" data-testid="response-body" tabindex="0" aria-label="Response body">{result.body}</pre>
          </>
        )}
      </div>
      </div>
    </section>
  );
}

// ---- usage

function UsageTab({ mock }) {
  const [hist, setHist] = useState(null);
  const [usage, setUsage] = useState(null);
  const [error, setError] = useState(null);
  const load = useCallback(async () => {
    try {
      const [h, u] = await Promise.all([
        api.admin('GET', `/mocks/${mock.id}/usage/history`),
        api.admin('GET', `/mocks/${mock.id}/usage`),
      ]);
      setHist(h);
      setUsage(u);
      setError(null);
    } catch (e) {
      setError(e);
    }
  }, [mock.id]);
  useEffect(() => {
    load();
    const t = setInterval(load, 10000);
    return () => clearInterval(t);
  }, [load]);
  const hhmm = (b) => new Date(b.start).toISOString().slice(11, 16);
  const day = (b, long) => (long ? new Date(b.start).toISOString().slice(0, 10) : String(new Date(b.start).getUTCDate()));
  const pct = usage && usage.month.limit ? Math.min(100, (usage.month.used / usage.month.limit) * 100) : 0;
  return (
    <section aria-label="Usage" class="usage">
      <ErrorNote error={error} />
      {usage && (
        <div class="quota card">
          <h2>Monthly quota</h2>
          <p data-testid="quota-used">
            {formatNumber(usage.month.used)} served this month{usage.month.limit ? ` of ${formatNumber(usage.month.limit)}` : ' (no quota)'}
            {' '}· resets <Time value={usage.month.resets_at} relative={false} />
          </p>
          {usage.month.limit > 0 && (
            <div class="meter" role="meter" aria-valuemin="0" aria-valuemax={usage.month.limit} aria-valuenow={usage.month.used} aria-label="Monthly quota used">
              <div class={`fill${pct >= 90 ? ' high' : ''}`} style={{ width: pct + '%' }} />
            </div>
          )}
          <p class="hint">
            This minute: {formatNumber(usage.minute.used)}{usage.minute.limit ? ` of ${formatNumber(usage.minute.limit)} requests (rate limit)` : ' requests (no rate limit)'}.
          </p>
        </div>
      )}
      {hist && (
        <>
          <Chart id="minutes" title="Last hour, per minute (UTC)" buckets={hist.minutes} label={hhmm} tick={10} />
          <Chart id="days" title="This month, per day (UTC)" buckets={hist.days} label={day} tick={Math.max(1, Math.ceil(hist.days.length / 10))} />
          <p class="hint">
            Served: answers with the mock's data (including HEAD and 304). Refused: 429 answers of its rate limit or
            monthly quota. Counts from other replicas arrive within a few seconds.
          </p>
        </>
      )}
      <button type="button" onClick={load}>Refresh</button>
    </section>
  );
}

// ---- the app

function App() {
  const { route, leaving, leave, stay } = useRoute();
  const [state, setState] = useState('loading');
  const [notice, setNotice] = useState('');
  const [signInEmail, setSignInEmail] = useState('');
  const [token, setToken] = useState(null);
  const [error, setError] = useState(null);
  const [sideProject, setSideProject] = useState('');
  const [confirmSignOut, setConfirmSignOut] = useState(false);
  // Below 800 px the header's pages and the sidebar fold into one menu,
  // so that the header is one row; a link followed closes it.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    if (route.page === 'list' || route.page === 'new') setSideProject(route.project || '');
  }, [route.page, route.project]);
  useEffect(() => setMenuOpen(false), [location.hash]);

  const check = useCallback(async () => {
    try {
      const s = await api.session();
      setState(s.signed_in ? 'in' : 'out');
    } catch (e) {
      setError(e);
      setState('out');
    }
  }, []);
  useEffect(() => {
    api.setSignedOutHandler((why) => {
      setNotice(why || 'Your session ended: sign in again.');
      setState('out');
    });
    check();
  }, []);
  useEffect(() => {
    // Move focus to the page's heading on navigation, for keyboard and
    // screen-reader users.
    const h = document.querySelector('main h1');
    if (h && state === 'in') {
      h.setAttribute('tabindex', '-1');
      h.focus({ preventScroll: true });
    }
  }, [route.page, route.id, state]);

  const signedIn = () => { setNotice(''); setError(null); setState('in'); };
  // An invitation link opens its page whether this browser is signed in or
  // not: accepting it signs the new member in.
  if (route.page === 'invite') {
    return (
      <InvitationPage secret={route.secret} onSignedIn={signedIn}
        onSignIn={(email) => { setSignInEmail(email); setNotice('Your account is ready: sign in with your email and password.'); setState('out'); }} />
    );
  }
  if (state === 'loading') return <p class="loading" aria-busy="true">Loading…</p>;
  if (state === 'out') {
    return (
      <>
        <ErrorNote error={error} />
        <SignIn notice={notice} email={signInEmail} onSignedIn={signedIn} />
      </>
    );
  }
  const signOut = async (sure) => {
    // Signing out leaves the page too: unsaved edits ask first.
    if (sure !== true && hasUnsaved()) {
      setConfirmSignOut(true);
      return;
    }
    setConfirmSignOut(false);
    forgetUnsaved();
    try {
      await api.signOut();
    } finally {
      knownTokens.clear();
      setNotice('Signed out.');
      setState('out');
    }
  };
  return (
    <TeamProvider>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); const h = document.querySelector('main h1'); if (h) { h.setAttribute('tabindex', '-1'); h.focus(); } }}>Skip to content</a>
      <header class={`top${menuOpen ? ' open' : ''}`}>
        <a class="brand" href="#/"><Logo />Decoy Studio</a>
        <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="main-nav sidebar-body" onClick={() => setMenuOpen(!menuOpen)}>
          {menuOpen ? 'Close menu' : 'Menu'}
        </button>
        <MainNav route={route} onSignOut={signOut} />
      </header>
      <div class="layout">
      <Sidebar open={menuOpen} route={route} projectID={route.page === 'list' ? route.project : sideProject} mockID={route.page === 'mock' ? route.id : ''} />
      {route.page === 'list' && !route.project && <MocksPage />}
      {route.page === 'list' && route.project && <ProjectPage key={route.project} projectID={route.project} tab={route.tab} />}
      {route.page === 'transfer' && <ImportExportPage />}
      {route.page === 'new' && <NewMock project={route.project} onToken={(t, m) => setToken({ token: t, mock: m })} />}
      {route.page === 'generate' && <GeneratePage go={go} mockId={route.id} key={route.id || ''} />}
      {route.page === 'mock' && <MockPage key={route.id} id={route.id} tab={route.tab} onProject={setSideProject} onToken={(t, m) => setToken({ token: t, mock: m })} />}
      {route.page === 'members' && <MembersPage />}
      {route.page === 'keys' && <KeysPage />}
      {route.page === 'audit' && <AuditPage />}
      {route.page === 'account' && <AccountPage />}
      </div>
      {token && <TokenDialog token={token.token} mock={token.mock} onClose={() => setToken(null)} />}
      {confirmSignOut && (
        <ConfirmDialog title="Sign out without saving?" confirm="Discard changes and sign out" cancel="Stay" danger onClose={() => setConfirmSignOut(false)} onConfirm={() => signOut(true)}>
          <p>Your edits on this page are not saved. Signing out discards them.</p>
        </ConfirmDialog>
      )}
      {leaving !== null && (
        <ConfirmDialog title="Leave without saving?" confirm="Discard changes" cancel="Stay" danger onClose={stay} onConfirm={leave}>
          <p>Your edits on this page are not saved. Leaving discards them.</p>
        </ConfirmDialog>
      )}
    </TeamProvider>
  );
}

render(<App />, document.getElementById('app'));
