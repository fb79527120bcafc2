// The Routes tab of a project (§11.2): the paths of its API the project
// answers at, under its base URL, each with the mock it answers with, its
// rules (§13.1, rules.jsx: edited, and tried with a request) and a curl
// command to copy; editors add, edit and delete routes (a deletion asks
// first). The curl of a route with parameters is filled in with
// values from its mock's records, so that it runs as it is.
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import * as api from './api.js';
import { ACTIONS, METHODS, TOKEN_VARIABLE, defaultAction, exampleValues, params, routeCurl } from './paths.js';
import { ConfirmDialog, CopyButton, Dialog, ErrorNote } from './ui.jsx';
import { RoleNote, items } from './team.jsx';
import { RulesDialog } from './rules.jsx';
import './routes.css';

// Mocks larger than this are not read for example values: the page would
// fetch and parse megabytes to fill in a URL.
const SAMPLE_MAX_BYTES = 2 << 20;

function isJSONType(ct) {
  const mt = (ct || '').split(';')[0].trim().toLowerCase();
  return mt === 'application/json' || mt.endsWith('+json');
}

// sampleable reports whether a mock's data is read for example values:
// JSON, not too large, and stored (one generated on every read differs on
// the next).
function sampleable(m) {
  return m && isJSONType(m.content_type) && m.size <= SAMPLE_MAX_BYTES && m.template_mode !== 'always';
}

/** routeName names a route as the server's errors do: GET /users/{id}. */
export const routeName = (r) => `${r.method} ${r.path}`;

/** PathText shows a path template that breaks, when it must, after a slash. */
function PathText({ path }) {
  const parts = path.split('/');
  return (
    <span class="mono route-path">
      {parts.map((s, i) => (i === 0 ? s : <Fragment key={i}>/{s}{i < parts.length - 1 && <wbr />}</Fragment>))}
    </span>
  );
}

/**
 * RoutesTab lists project's routes; editable shows the controls that
 * change them.
 */
export function RoutesTab({ project, editable }) {
  const [routes, setRoutes] = useState(null);
  const [mocks, setMocks] = useState(null);
  const [samples, setSamples] = useState({});
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  const [editing, setEditing] = useState(null); // 'new' or a route
  const [deleting, setDeleting] = useState(null);
  const [ruling, setRuling] = useState(null); // the route whose rules are open

  const load = () =>
    Promise.all([api.admin('GET', `/projects/${project.id}/routes`), api.listMocks({ project_id: project.id })]).then(
      ([a, ms]) => {
        setRoutes(items(a, 'routes'));
        setMocks(ms.slice().sort((x, y) => String(x.name).localeCompare(String(y.name))));
        setError(null);
      },
      setError,
    );
  useEffect(() => {
    setRoutes(null);
    setMocks(null);
    setNote('');
    setError(null);
    load();
  }, [project.id]);

  // The data of each mock a route with parameters answers with, once per
  // version of it (its etag), for the curl's example values.
  const mockOf = (id) => (mocks || []).find((m) => m.id === id) || null;
  useEffect(() => {
    if (!routes || !mocks) return;
    let live = true;
    const wanted = new Set(routes.filter((r) => params(r.path).length > 0).map((r) => r.mock_id));
    for (const id of wanted) {
      const m = mockOf(id);
      const key = m ? `${id} ${m.etag}` : '';
      if (!sampleable(m) || (samples[id] && samples[id].key === key)) continue;
      api.admin('GET', `/mocks/${id}/data`, { raw: true }).then(
        (text) => {
          let data = null;
          try {
            data = JSON.parse(text);
          } catch {
            // no example values: the curl keeps the placeholders
          }
          if (live) setSamples((all) => ({ ...all, [id]: { key, data } }));
        },
        () => live && setSamples((all) => ({ ...all, [id]: { key, data: null } })),
      );
    }
    return () => { live = false; };
  }, [routes, mocks]);

  const saved = (r, added) => {
    setEditing(null);
    setNote(added ? `Route ${routeName(r)} added.` : `Route ${routeName(r)} saved.`);
    load();
  };
  const base = project.base_url || '';

  return (
    <section aria-labelledby="routes-title" class="routes-tab">
      <div class="title-row">
        <h2 id="routes-title">Routes</h2>
        {editable && <button type="button" class="primary" onClick={() => { setNote(''); setEditing('new'); }} disabled={!mocks}>Add route</button>}
      </div>
      <p class="hint">
        The project answers at its base URL followed by a route's path, as the API it stands in for would: an app
        changes only its base URL. <code>{'{name}'}</code> in a path is a parameter that selects the records whose
        field of that name (or the field it is bound to) equals it.
      </p>
      {!editable && <RoleNote need="editor" what="adding, changing and deleting routes" workspaceID={project.workspace_id} />}
      {note && <p class="notice" role="status">{note}</p>}
      <ErrorNote error={error} />
      {!routes && !error && <p aria-busy="true">Loading…</p>}
      {routes && routes.length === 0 && (
        <p data-testid="no-routes">
          No routes yet.{editable ? ' Add one: a method, a path and the mock it answers with.' : ''} Until then the
          project answers <code>404</code> at every path.
        </p>
      )}
      {routes && routes.length > 0 && (
        <table class="mocks routes">
          <caption class="sr-only">Routes of {project.name}, in the order they were added</caption>
          <thead>
            <tr>
              <th scope="col">Method</th><th scope="col">Path</th><th scope="col">Action</th><th scope="col">Mock</th>
              <th scope="col">Rules</th><th scope="col">curl</th>{editable && <th scope="col"><span class="sr-only">Actions</span></th>}
            </tr>
          </thead>
          <tbody>
            {routes.map((r) => {
              const m = mockOf(r.mock_id);
              const sample = samples[r.mock_id];
              const values = sample && sample.data !== null ? exampleValues(r, sample.data) || {} : {};
              const cmd = routeCurl(base, r, { values, secret: !!(m && m.private) });
              const filled = Object.entries(values);
              return (
                <tr key={r.id} data-route={routeName(r)}>
                  <td data-label="Method"><span class="method">{r.method}</span></td>
                  <td data-label="Path"><PathText path={r.path} /></td>
                  <td data-label="Action">
                    <div>
                      {r.action}
                      {r.items && <span class="hint block">items at <code>{r.items}</code></span>}
                      {Object.keys(r.bind || {}).length > 0 && (
                        <span class="hint block">{Object.entries(r.bind).map(([p, f]) => `{${p}} is ${f}`).join(', ')}</span>
                      )}
                    </div>
                  </td>
                  <td data-label="Mock">{m ? <a href={`#/mocks/${m.id}`}>{m.name || m.id}</a> : <span class="mono small">{r.mock_id}</span>}</td>
                  <td data-label="Rules">
                    <button type="button" class="rules-button" onClick={() => { setNote(''); setRuling(r); }}>
                      Rules <span class="count" data-testid="rule-count">{(r.rules || []).length}</span>
                      <span class="sr-only"> of {routeName(r)}</span>
                    </button>
                  </td>
                  <td data-label="curl">
                    <div class="route-curl">
                      <div class="curl">
                        <output class="code" data-testid="route-curl">{cmd}</output>
                        <CopyButton text={cmd} name={`Copy the curl of ${routeName(r)}`} />
                      </div>
                      {filled.length > 0 && (
                        <span class="hint block" data-testid="route-example">
                          {filled.map(([p, v]) => `{${p}} = ${v}`).join(', ')}: from the first record of {m ? m.name : 'the mock'}.
                        </span>
                      )}
                      {m && m.private && <span class="hint block">A private mock: set <code>{TOKEN_VARIABLE}</code> to its token.</span>}
                    </div>
                  </td>
                  {editable && (
                    <td data-label="Actions">
                      <span class="route-buttons">
                        <button type="button" aria-label={`Edit ${routeName(r)}`} onClick={() => { setNote(''); setEditing(r); }}>Edit</button>
                        <button type="button" class="danger" aria-label={`Delete ${routeName(r)}`} onClick={() => { setNote(''); setDeleting(r); }}>Delete</button>
                      </span>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {editing && (
        <RouteDialog project={project} mocks={mocks || []} route={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)} onSaved={saved} />
      )}
      {ruling && (() => {
        const sample = samples[ruling.mock_id];
        const values = sample && sample.data !== null ? exampleValues(ruling, sample.data) || {} : {};
        return (
          <RulesDialog route={ruling} base={base} mock={mockOf(ruling.mock_id)} values={values} editable={editable}
            onClose={() => setRuling(null)} onSaved={(r) => { setRoutes((rs) => rs.map((x) => (x.id === r.id ? r : x))); }} />
        );
      })()}
      {deleting && (
        <ConfirmDialog title="Delete this route?" confirm="Delete" danger onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await api.admin('DELETE', `/routes/${deleting.id}`);
            setNote(`Route ${routeName(deleting)} deleted.`);
            setDeleting(null);
            load();
          }}>
          <p>
            <strong class="mono">{routeName(deleting)}</strong> stops answering at once: a request there gets{' '}
            <code>404</code>, unless another route matches it. Its mock and the mock's data stay.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}

/**
 * RouteDialog is the form of a new route (route null) or of a change to
 * one. The bind rows follow the path's parameters as it is typed.
 */
function RouteDialog({ project, mocks, route, onClose, onSaved }) {
  const [method, setMethod] = useState(route ? route.method : 'GET');
  const [path, setPath] = useState(route ? route.path : '/');
  const [mockID, setMockID] = useState(route ? route.mock_id : (mocks[0] && mocks[0].id) || '');
  // '' is the default action of the method and path, whatever they become.
  const [action, setAction] = useState(route && route.action !== defaultAction(route.method, route.path) ? route.action : '');
  const [bind, setBind] = useState(route ? { ...route.bind } : {});
  const [itemsPath, setItemsPath] = useState(route && route.items ? route.items : '');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const names = params(path);

  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const body = {
      method,
      path: path.trim(),
      mock_id: mockID,
      bind: Object.fromEntries(names.filter((p) => (bind[p] || '').trim()).map((p) => [p, bind[p].trim()])),
      items: itemsPath.trim() || null,
    };
    // A change sends the action in full: the server keeps a route's action
    // when its method or path changes, so the default is worked out here.
    if (action) body.action = action;
    else if (route) body.action = defaultAction(method, body.path);
    try {
      const r = route
        ? await api.admin('PATCH', `/routes/${route.id}`, { body: JSON.stringify(body) })
        : await api.admin('POST', `/projects/${project.id}/routes`, { body: JSON.stringify(body) });
      onSaved(r, !route);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <Dialog title={route ? `Edit ${routeName(route)}` : 'Add a route'} onClose={onClose} labelledBy="route-title">
      <form onSubmit={submit} class="stack route-form">
        {mocks.length === 0 && (
          <p class="warning">This project has no mocks yet: a route answers with one. <a href={`#/new/${project.id}`}>Create a mock</a> first.</p>
        )}
        <div class="fields">
          <div class="method-field">
            <label for="route-method">Method</label>
            <select id="route-method" value={method} onChange={(e) => setMethod(e.target.value)}>
              {METHODS.map((m) => <option key={m} value={m}>{m}</option>)}
            </select>
          </div>
          <div class="path-field">
            <label for="route-path">Path</label>
            <input id="route-path" class="mono" required autocomplete="off" spellcheck={false} placeholder="/users/{id}" value={path}
              onInput={(e) => setPath(e.target.value)} aria-describedby="route-path-hint" />
          </div>
        </div>
        <p class="hint" id="route-path-hint">
          After the base URL <span class="mono">{project.base_url}</span>. A segment <code>{'{name}'}</code> is a
          parameter; a path that ends with one is an item route, which answers one record.
        </p>
        <div class="fields">
          <div>
            <label for="route-mock">Mock</label>
            <select id="route-mock" required value={mockID} onChange={(e) => setMockID(e.target.value)}>
              {mocks.map((m) => <option key={m.id} value={m.id}>{m.name || m.id}</option>)}
            </select>
          </div>
          <div>
            <label for="route-action">Action</label>
            <select id="route-action" value={action} onChange={(e) => setAction(e.target.value)} aria-describedby="route-action-hint">
              <option value="">Default: {defaultAction(method, path.trim())}</option>
              {ACTIONS.map((a) => <option key={a} value={a}>{a}</option>)}
            </select>
          </div>
        </div>
        <p class="hint" id="route-action-hint">
          <em>read</em> answers the mock's data; <em>create</em>, <em>replace</em>, <em>update</em> and{' '}
          <em>delete</em> change its records.
        </p>
        {names.length > 0 && (
          <fieldset class="bind">
            <legend>Parameters</legend>
            <p class="hint">Each parameter matches the record field of its own name unless you name another (a dot path, as in filters).</p>
            {names.map((p) => (
              <div class="bind-row" key={p}>
                <label for={`route-bind-${p}`}>Field for <span class="mono">{`{${p}}`}</span></label>
                <input id={`route-bind-${p}`} class="mono" autocomplete="off" spellcheck={false} placeholder={p} value={bind[p] || ''}
                  onInput={(e) => setBind({ ...bind, [p]: e.target.value })} />
              </div>
            ))}
          </fieldset>
        )}
        <div>
          <label for="route-items">Items (optional)</label>
          <input id="route-items" class="mono" autocomplete="off" spellcheck={false} placeholder="data" value={itemsPath}
            onInput={(e) => setItemsPath(e.target.value)} aria-describedby="route-items-hint" />
          <p class="hint" id="route-items-hint">
            The dot path of the array of records inside the mock's data, as <code>data</code> for{' '}
            <code>{'{"data": […], "links": {…}}'}</code>. Empty: the data itself is the array.
          </p>
        </div>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" onClick={onClose}>Cancel</button>
          <button type="submit" class="primary" disabled={busy || mocks.length === 0}>{route ? 'Save route' : 'Create route'}</button>
        </div>
      </form>
    </Dialog>
  );
}
