// Decoy Studio's import and export page: drop a file (an OpenAPI
// description, a json-server db.json, or a Decoy export), see what it
// would do (a dry run: the mocks it creates, the mocks it gives new data,
// the routes it mounts, what it skips), then import it; and download the
// project as a .tar.gz.
import { useEffect, useRef, useState } from 'preact/hooks';
import * as api from './api.js';
import { UploadProgress, formatBytes, tooLarge } from './ui.jsx';
import { ProjectSelect } from './projects.jsx';
import './importexport.css';

const FORMATS = [
  ['', 'Guess from the content'],
  ['openapi', 'OpenAPI 3.0 or 3.1 (JSON or YAML)'],
  ['json-server', 'json-server db.json'],
  ['decoy', 'Decoy export (.tar.gz)'],
];

function Problem({ error, id }) {
  if (!error) return null;
  return (
    <p class="error" role="alert" id={id}>
      {error.status ? <strong>{error.status}: </strong> : null}
      {error.message}
    </p>
  );
}

// isBasePathError tells the server's refusal of ?base_path= (shown under
// that field) from the file's own problems.
const isBasePathError = (e) => !!e && e.status === 400 && /^Invalid base_path\b/.test(e.message || '');

const plural = (n, one, many = one + 's') => `${n} ${n === 1 ? one : many}`;

// readWhole says whether the server reads file f whole to import it in
// format (guessed from the content when empty), as the server guesses
// from the file's first MiB: an OpenAPI description (YAML, or a JSON
// object with a top-level "openapi" or "swagger" member), not an export
// (gzip) or a db.json, which stream. A JSON description whose member
// comes later is left to the server to refuse.
async function readWhole(f, format) {
  if (format) return format === 'openapi';
  const head = new Uint8Array(await f.slice(0, 1 << 20).arrayBuffer());
  if (head[0] === 0x1f && head[1] === 0x8b) return false;
  const text = new TextDecoder().decode(head).replace(/^\uFEFF/, '').replace(/^[ \t\r\n]+/, '');
  if (!text.startsWith('{')) return true;
  return topKeys(text).some((k) => k === 'openapi' || k === 'swagger');
}

// topKeys returns the keys of the top-level object whose start text is,
// as far as text holds them whole.
function topKeys(text) {
  const keys = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) break;
      if (depth === 1 && /^[ \t\r\n]*:/.test(text.slice(j + 1, j + 64))) {
        try {
          keys.push(JSON.parse(text.slice(i, j + 1)));
        } catch {
          // not a string JSON reads
        }
      }
      i = j;
    }
  }
  return keys;
}

function importPath({ project, format, newIDs, basePath }, dryRun) {
  const q = new URLSearchParams();
  if (format) q.set('format', format);
  if (newIDs) q.set('new_ids', 'true');
  if (basePath) q.set('base_path', basePath);
  if (dryRun) q.set('dry_run', 'true');
  const s = q.toString();
  return `/projects/${project}/import${s ? '?' + s : ''}`;
}

// list is an answer's array under key: [] when the server leaves it out.
const list = (answer, key) => (answer && Array.isArray(answer[key]) ? answer[key] : []);

/**
 * outcome counts what an import answer does. A route that already exists
 * (same method and path) keeps its id: in a dry run it is the one with an
 * id; after the import, the one whose id the dry run showed (existing).
 */
function outcome(answer, existing) {
  const routes = list(answer, 'routes');
  const kept = (r) => (existing ? existing.has(r.id) : !!r.id);
  return {
    created: list(answer, 'created'),
    updated: list(answer, 'updated'),
    routes,
    kept,
    newRoutes: routes.filter((r) => !kept(r)).length,
    keptRoutes: routes.filter(kept).length,
    skipped: list(answer, 'skipped'),
  };
}

/** Skipped lists the parts of a file that were not imported, with why. */
function Skipped({ skipped }) {
  if (!skipped.length) return null;
  return (
    <>
      <h3>Skipped ({skipped.length})</h3>
      <ul class="skipped" aria-label="Skipped">
        {skipped.map((s, i) => (
          <li key={i}><code>{s.source}</code>: {s.reason}</li>
        ))}
      </ul>
    </>
  );
}

/**
 * MockTable lists mocks an import creates or updates. A dry run's new
 * mocks have no page yet (their ids are not the ones the import gives
 * them): linked only once they exist (linked). names holds the stored
 * name of an existing mock, which an update keeps.
 */
function MockTable({ mocks, caption, linked, update, names = {} }) {
  return (
    <table class="mocks import-mocks">
      <caption class="sr-only">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Name</th><th scope="col">Status</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Private</th>
        </tr>
      </thead>
      <tbody>
        {mocks.map((m) => {
          const stored = names[m.id];
          const name = stored || m.name || m.id;
          return (
            <tr key={m.id}>
              <td data-label="Name">
                <div>
                  {linked ? <a href={`#/mocks/${m.id}${update ? '/versions' : ''}`}>{name}</a> : name}
                  {stored && m.name && stored !== m.name && <span class="hint block">{m.name} in the file; the mock keeps its name</span>}
                </div>
              </td>
              <td data-label="Status">{m.status}</td>
              <td data-label="Type" class="small mono">{m.content_type}</td>
              <td data-label="Size">{formatBytes(m.size)}</td>
              <td data-label="Private">{m.private ? 'yes' : 'no'}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** RouteTable lists the routes an import mounts: method, path, the mock's name, action, and whether the route is new. */
function RouteTable({ routes, kept, mockName, caption }) {
  return (
    <table class="mocks import-routes">
      <caption class="sr-only">{caption}</caption>
      <thead>
        <tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Mock</th><th scope="col">Action</th><th scope="col">Route</th></tr>
      </thead>
      <tbody>
        {routes.map((r, i) => (
          <tr key={r.id || i} data-route={`${r.method} ${r.path}`}>
            <td data-label="Method"><span class="method">{r.method}</span></td>
            <td data-label="Path" class="mono route-path">{r.path}</td>
            <td data-label="Mock">{mockName(r.mock_id)}</td>
            <td data-label="Action">
              <div>
                {r.action}
                {r.items && <span class="hint block">items at <code>{r.items}</code></span>}
              </div>
            </td>
            <td data-label="Route">{kept(r) ? 'exists: updated in place' : 'new'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Outcome shows what an import does (done false: a dry run's preview) or
 * did: the mocks created, the mocks updated, the routes, what was skipped.
 */
function Outcome({ o, done, names, baseURL }) {
  const byID = new Map([...o.created, ...o.updated].map((m) => [m.id, m]));
  const mockName = (id) => names[id] || (byID.get(id) && byID.get(id).name) || id;
  return (
    <>
      {o.created.length > 0 && (
        <>
          <h3>{done ? 'Created' : 'To create'} ({o.created.length})</h3>
          <MockTable mocks={o.created} caption={done ? 'Mocks created' : 'Mocks to create'} linked={done} />
        </>
      )}
      {o.updated.length > 0 && (
        <>
          <h3>{done ? 'Updated' : 'To update'} ({o.updated.length})</h3>
          <p class="hint">
            {done
              ? 'Each kept its id, name, settings and routes, and got the file\'s data as a new version; the data it had is in its Versions tab.'
              : 'These mocks already answer routes of the file (the same method and path). Each keeps its id, name, settings and routes, and gets the file\'s data as a new version; its current data stays in its Versions tab.'}
          </p>
          <MockTable mocks={o.updated} caption={done ? 'Mocks updated' : 'Mocks to update'} linked update names={names} />
        </>
      )}
      {o.routes.length > 0 && (
        <>
          <h3>Routes ({o.routes.length})</h3>
          {baseURL && <p class="hint">Each answers at the project's base URL, <span class="mono">{baseURL}</span>, followed by its path.</p>}
          <RouteTable routes={o.routes} kept={o.kept} mockName={mockName} caption={done ? 'Routes added or updated' : 'Routes to add or update'} />
        </>
      )}
      <Skipped skipped={o.skipped} />
    </>
  );
}

// previewTitle says what a dry run would do, as the preview's heading.
function previewTitle(o) {
  const parts = [];
  if (o.created.length) parts.push(`${plural(o.created.length, 'mock')} to create`);
  if (o.updated.length) parts.push(`${plural(o.updated.length, 'mock')} to update`);
  if (o.newRoutes) parts.push(`${plural(o.newRoutes, 'route')} to add`);
  if (o.keptRoutes) parts.push(`${plural(o.keptRoutes, 'route')} to update`);
  return parts.length ? parts.join(', ') : 'nothing to import';
}

// doneTitle says what an import did.
function doneTitle(o) {
  const parts = [];
  if (o.created.length) parts.push(`${plural(o.created.length, 'mock')} created`);
  if (o.updated.length) parts.push(`${plural(o.updated.length, 'mock')} updated`);
  if (o.newRoutes) parts.push(`${plural(o.newRoutes, 'route')} added`);
  if (o.keptRoutes) parts.push(`${plural(o.keptRoutes, 'route')} updated`);
  return parts.length ? parts.join(', ') : 'nothing changed';
}

// confirmLabel is the confirm button's text: how many mocks and routes
// the import writes.
function confirmLabel(o) {
  const parts = [];
  const mocks = o.created.length + o.updated.length;
  if (mocks) parts.push(plural(mocks, 'mock'));
  if (o.routes.length) parts.push(plural(o.routes.length, 'route'));
  return parts.length ? `Import: ${parts.join(', ')}` : 'Nothing to import';
}

/**
 * storedNames returns the names the project's mocks have now, by id, when
 * an answer updates some: a dry run names them as the file does, but an
 * update keeps the mock's name.
 */
async function storedNames(project, answer) {
  if (!list(answer, 'updated').length) return {};
  try {
    const ms = await api.listMocks({ project_id: project });
    return Object.fromEntries(ms.map((m) => [m.id, m.name]));
  } catch {
    return {};
  }
}

export function ImportExportPage() {
  // The project of the workspace chosen in the header: imports go there,
  // and the export is of it.
  const [project, setProject] = useState('');
  const [info, setInfo] = useState(null); // the project: its name and base URL
  const [file, setFile] = useState(null);
  const [format, setFormat] = useState('');
  const [newIDs, setNewIDs] = useState(false);
  const [basePath, setBasePath] = useState('');
  // preview: the dry run's answer, with the file and the parameters it
  // ran with, which the import sends as they are.
  const [preview, setPreview] = useState(null);
  const [done, setDone] = useState(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [over, setOver] = useState(false);
  const input = useRef(null);
  const [progress, setProgress] = useState(null);
  // Only the newest dry run's answer is shown: an older one may come last.
  const seq = useRef(0);

  const loadInfo = (id) => {
    if (!id) return;
    api.admin('GET', `/projects/${id}`).then((p) => setInfo(p), () => setInfo(null));
  };
  useEffect(() => {
    setInfo(null);
    loadInfo(project);
  }, [project]);

  const current = { project, format, newIDs, basePath: basePath.trim() };

  const check = async (f, changed = {}) => {
    const params = { ...current, ...changed };
    const n = ++seq.current;
    setFile(f);
    setPreview(null);
    setDone(null);
    setError(null);
    if (!f || !params.project) return;
    // Checked before a byte is sent: a file over the limit would be
    // refused only once uploaded. Only a file the server reads whole:
    // an export and a db.json stream, each document bounded on its own.
    const why = (await readWhole(f, params.format)) ? tooLarge(f, await api.maxDataBytes()) : '';
    if (n !== seq.current) return;
    if (why) {
      setFile(null);
      if (input.current) input.current.value = '';
      setError(new Error(why));
      return;
    }
    setBusy(true);
    try {
      const answer = await api.upload('POST', importPath(params, true), f, { contentType: 'application/octet-stream', onProgress: setProgress });
      const names = await storedNames(params.project, answer);
      if (n === seq.current) setPreview({ file: f, params, answer, names });
    } catch (e) {
      if (n === seq.current) setError(e);
    } finally {
      if (n === seq.current) {
        setBusy(false);
        setProgress(null);
      }
    }
  };

  // A file chosen is checked against each project chosen, from this
  // render's state: the select may call setProject from a render before
  // the file was dropped (it chooses the first project once its list
  // comes), whose closure would not have it.
  useEffect(() => {
    if (file) check(file, { project });
    else {
      setPreview(null);
      setDone(null);
    }
  }, [project]);

  const clearFile = () => {
    seq.current++;
    setBusy(false);
    setProgress(null);
    setPreview(null);
    setFile(null);
    if (input.current) input.current.value = '';
  };

  const confirm = async () => {
    const p = preview;
    const n = ++seq.current;
    setBusy(true);
    setError(null);
    try {
      const answer = await api.upload('POST', importPath(p.params, false), p.file, { contentType: 'application/octet-stream', onProgress: setProgress });
      // The routes the dry run found are the ones kept; the others are new.
      const existing = new Set(list(p.answer, 'routes').map((r) => r.id).filter(Boolean));
      setDone({ file: p.file, params: p.params, answer, existing });
      clearFile();
      // An export may have brought its slug: the base URL is read again.
      loadInfo(p.params.project);
    } catch (e) {
      if (n === seq.current) setError(e);
    } finally {
      setBusy(false);
      setProgress(null);
    }
  };

  const drop = (e) => {
    e.preventDefault();
    setOver(false);
    const f = e.dataTransfer && e.dataTransfer.files[0];
    if (!f) return;
    // The file input names the dropped file, as it names a chosen one.
    if (input.current) {
      try {
        input.current.files = e.dataTransfer.files;
      } catch {
        // a browser that refuses: the preview names the file anyway
      }
    }
    check(f);
  };

  const [exporting, setExporting] = useState(false);
  const [exportError, setExportError] = useState(null);
  const download = async () => {
    setExporting(true);
    setExportError(null);
    try {
      const blob = await api.admin('GET', `/projects/${project}/export`, { raw: 'blob' });
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = 'decoy-default.tar.gz';
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (e) {
      setExportError(e);
    } finally {
      setExporting(false);
    }
  };

  const pre = preview && outcome(preview.answer);
  const post = done && outcome(done.answer, done.existing);
  const tokens = post ? post.created.filter((m) => m.token) : [];
  const baseError = isBasePathError(error) ? error : null;
  const baseURL = info && info.id === project ? info.base_url : '';
  const routesLink = done && `#/projects/${done.params.project}/routes`;
  return (
    <main id="main">
      <h1>Import and export</h1>
      <ProjectSelect id="transfer-project" value={project} onChange={setProject} />
      <section class="card" aria-labelledby="import-title">
        <h2 id="import-title">Import</h2>
        <p class="hint">
          An OpenAPI description answers at its own paths: every operation with a 2xx answer becomes a route. A list
          (a GET answering an array of records) gets a mock, its example or data generated from its schema, and the
          operations on its records are routes on that mock; any other operation gets a mock of its own. A json-server
          db.json gives a mock per key, with its routes; a Decoy export gives back its mocks and routes. Importing a
          file again updates its mocks in place, as new versions. Nothing is stored until you confirm, and an import
          that fails stores nothing.
        </p>
        <div
          class={'dropzone' + (over ? ' over' : '')}
          data-testid="dropzone"
          onDragOver={(e) => { e.preventDefault(); setOver(true); }}
          onDragLeave={() => setOver(false)}
          onDrop={drop}
        >
          <p>Drop a file here, or</p>
          <label for="import-file">Choose a file</label>
          <input id="import-file" type="file" ref={input} onChange={(e) => check(e.target.files[0] || null)} />
        </div>
        <div class="fields">
          <div>
            <label for="import-format">Format</label>
            <select id="import-format" value={format} onChange={(e) => { setFormat(e.target.value); if (file) check(file, { format: e.target.value }); }}>
              {FORMATS.map(([v, label]) => <option key={v} value={v}>{label}</option>)}
            </select>
          </div>
          <div>
            <label for="import-base-path">Base path (optional)</label>
            <input id="import-base-path" class="mono" autocomplete="off" spellcheck={false} placeholder="/v1" value={basePath}
              aria-describedby={baseError ? 'import-base-path-hint import-base-path-error' : 'import-base-path-hint'}
              aria-invalid={baseError ? 'true' : undefined}
              onInput={(e) => setBasePath(e.target.value)}
              onChange={(e) => { if (file) check(file, { basePath: e.target.value.trim() }); }}
              onKeyDown={(e) => { if (e.key === 'Enter' && file) check(file, { basePath: e.currentTarget.value.trim() }); }} />
            <p class="hint" id="import-base-path-hint">e.g. /v1: before the path of every route.</p>
            <Problem error={baseError} id="import-base-path-error" />
          </div>
          <div class="check">
            <input id="import-new-ids" type="checkbox" checked={newIDs} onChange={(e) => { setNewIDs(e.target.checked); if (file) check(file, { newIDs: e.target.checked }); }} />
            <label for="import-new-ids">New ids (for a Decoy export)</label>
          </div>
        </div>
        {busy && <p aria-busy="true">Reading {file ? file.name : 'the file'}…</p>}
        <UploadProgress progress={progress} />
        {!baseError && <Problem error={error} />}
        {pre && (
          <div class="preview" aria-label="Preview">
            <h3>{preview.file.name}: {previewTitle(pre)}</h3>
            {preview.params.basePath && <p class="hint">Under the base path <span class="mono">{preview.params.basePath}</span>.</p>}
            <Outcome o={pre} done={false} names={preview.names} baseURL={baseURL} />
            <div class="actions">
              <button type="button" class="primary" disabled={busy || (pre.created.length + pre.updated.length + pre.routes.length === 0)} onClick={confirm}>
                {confirmLabel(pre)}
              </button>
              <button type="button" disabled={busy} onClick={clearFile}>Cancel</button>
            </div>
          </div>
        )}
        {post && (
          <div class="result" aria-label="Result">
            <div class="notice" role="status">
              <p>Imported {done.file.name}: {doneTitle(post)}.</p>
              {post.routes.length > 0 && (
                <p>
                  <a href={routesLink}>See the routes of {info && info.id === done.params.project ? info.name : 'the project'}</a>
                  {baseURL && <>, served at <span class="mono">{baseURL}</span></>}.
                </p>
              )}
            </div>
            {tokens.length > 0 && (
              <div class="warning">
                <p>
                  <strong>Store these tokens now.</strong> This is the only time Decoy shows them: the private mocks
                  came back private, with new tokens.
                </p>
                <ul>
                  {tokens.map((m) => <li key={m.id}>{m.name || m.id}: <code data-testid="import-token">{m.token}</code></li>)}
                </ul>
              </div>
            )}
            <Outcome o={post} done names={{}} baseURL={baseURL} />
          </div>
        )}
      </section>
      <section class="card" aria-labelledby="export-title">
        <h2 id="export-title">Export</h2>
        <p class="hint">
          Every mock of the project as a .tar.gz: <code>decoy.json</code> (ids, settings, templates, and the project's
          slug and routes; no tokens) and each mock's data, byte for byte. Import it here or with{' '}
          <code>decoy import</code>; unpacked, it is a folder <code>decoy serve --seed</code> takes.
        </p>
        <Problem error={exportError} />
        <button type="button" class="primary" disabled={exporting} onClick={download}>Export</button>
      </section>
    </main>
  );
}
