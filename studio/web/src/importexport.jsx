// Decoy Studio's import and export page: drop a file (an OpenAPI
// description, a json-server db.json, or a Decoy export), see what it
// would create and skip (a dry run), then import it; and download the
// project as a .tar.gz.
import { useRef, useState } from 'preact/hooks';
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

function Problem({ error }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.status ? <strong>{error.status}: </strong> : null}
      {error.message}
    </p>
  );
}

function importPath(project, format, newIDs, dryRun) {
  const q = new URLSearchParams();
  if (format) q.set('format', format);
  if (newIDs) q.set('new_ids', 'true');
  if (dryRun) q.set('dry_run', 'true');
  const s = q.toString();
  return `/projects/${project}/import${s ? '?' + s : ''}`;
}

/** Skipped lists the parts of a file no mock is made from, with why. */
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

export function ImportExportPage() {
  // The project of the workspace chosen in the header: imports go there,
  // and the export is of it.
  const [project, setProject] = useState('');
  const [file, setFile] = useState(null);
  const [format, setFormat] = useState('');
  const [newIDs, setNewIDs] = useState(false);
  const [preview, setPreview] = useState(null);
  const [done, setDone] = useState(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [over, setOver] = useState(false);
  const input = useRef(null);
  const [progress, setProgress] = useState(null);

  const check = async (f, fmt = format, ids = newIDs) => {
    setFile(f);
    setPreview(null);
    setDone(null);
    setError(null);
    if (!f) return;
    // Checked before a byte is sent: a file over the limit would be
    // refused only once uploaded.
    const why = tooLarge(f, await api.maxDataBytes());
    if (why) {
      setFile(null);
      if (input.current) input.current.value = '';
      setError(new Error(why));
      return;
    }
    setBusy(true);
    try {
      setPreview(await api.upload('POST', importPath(project, fmt, ids, true), f, { contentType: 'application/octet-stream', onProgress: setProgress }));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
      setProgress(null);
    }
  };

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      const res = await api.upload('POST', importPath(project, format, newIDs, false), file, { contentType: 'application/octet-stream', onProgress: setProgress });
      setDone(res);
      setPreview(null);
      setFile(null);
      if (input.current) input.current.value = '';
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
      setProgress(null);
    }
  };

  const drop = (e) => {
    e.preventDefault();
    setOver(false);
    const f = e.dataTransfer && e.dataTransfer.files[0];
    if (f) check(f);
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

  const tokens = done ? done.created.filter((m) => m.token) : [];
  return (
    <main id="main">
      <h1>Import and export</h1>
      <ProjectSelect id="transfer-project" value={project} onChange={(p) => { setProject(p); setPreview(null); setDone(null); }} />
      <section class="card" aria-labelledby="import-title">
        <h2 id="import-title">Import</h2>
        <p class="hint">
          An OpenAPI description makes one mock per GET operation with a JSON response (its example, else data
          generated from its schema); a json-server db.json one mock per key; a Decoy export gives back its mocks
          with their ids, settings and templates. Nothing is stored until you confirm, and an import that fails
          stores nothing.
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
            <select id="import-format" value={format} onChange={(e) => { setFormat(e.target.value); if (file) check(file, e.target.value); }}>
              {FORMATS.map(([v, label]) => <option key={v} value={v}>{label}</option>)}
            </select>
          </div>
          <div class="check">
            <input id="import-new-ids" type="checkbox" checked={newIDs} onChange={(e) => { setNewIDs(e.target.checked); if (file) check(file, format, e.target.checked); }} />
            <label for="import-new-ids">New ids (for a Decoy export)</label>
          </div>
        </div>
        {busy && <p aria-busy="true">Reading {file ? file.name : 'the file'}…</p>}
        <UploadProgress progress={progress} />
        <Problem error={error} />
        {preview && (
          <div class="preview" aria-label="Preview">
            <h3>{file.name}: {preview.created.length} {preview.created.length === 1 ? 'mock' : 'mocks'} to create</h3>
            {preview.created.length > 0 && (
              <table class="mocks">
                <caption class="sr-only">Mocks to create</caption>
                <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Private</th></tr></thead>
                <tbody>
                  {preview.created.map((m) => (
                    <tr key={m.id}>
                      <td data-label="Name">{m.name}</td>
                      <td data-label="Status">{m.status}</td>
                      <td data-label="Type" class="small mono">{m.content_type}</td>
                      <td data-label="Size">{formatBytes(m.size)}</td>
                      <td data-label="Private">{m.private ? 'yes' : 'no'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <Skipped skipped={preview.skipped} />
            <div class="actions">
              <button type="button" class="primary" disabled={busy || preview.created.length === 0} onClick={confirm}>
                Import {preview.created.length} {preview.created.length === 1 ? 'mock' : 'mocks'}
              </button>
              <button type="button" disabled={busy} onClick={() => { setPreview(null); setFile(null); if (input.current) input.current.value = ''; }}>Cancel</button>
            </div>
          </div>
        )}
        {done && (
          <div class="notice" role="status">
            <p>Imported {done.created.length} {done.created.length === 1 ? 'mock' : 'mocks'}:</p>
            <ul>
              {done.created.map((m) => <li key={m.id}><a href={`#/mocks/${m.id}`}>{m.name || m.id}</a></li>)}
            </ul>
          </div>
        )}
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
        {done && <Skipped skipped={done.skipped} />}
      </section>
      <section class="card" aria-labelledby="export-title">
        <h2 id="export-title">Export</h2>
        <p class="hint">
          Every mock of the project as a .tar.gz: <code>decoy.json</code> (ids, settings and templates; no tokens) and each
          mock's data, byte for byte. Import it here or with <code>decoy import</code>; unpacked, it is a folder{' '}
          <code>decoy serve --seed</code> takes.
        </p>
        <Problem error={exportError} />
        <button type="button" class="primary" disabled={exporting} onClick={download}>Export</button>
      </section>
    </main>
  );
}
