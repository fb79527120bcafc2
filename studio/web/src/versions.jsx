// The Versions tab of a mock: the kept versions of its data, newest first,
// a side-by-side diff of any two, and a restore that asks first. The diff
// is jsdiff's line diff (the "diff" package), laid out in two columns here.
import { diffLines } from 'diff';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { versionActor } from './actor.js';
import * as api from './api.js';
import { useTeam } from './team.jsx';
import './versions.css';

// Versions larger than this are not diffed in the page: fetching and
// laying out megabytes of lines would stall it.
const MAX_DIFF_BYTES = 1 << 20;
// The diff gives up after this long (very different large texts).
const DIFF_TIMEOUT_MS = 2000;
// Unchanged lines shown around each change; longer runs are folded.
const CONTEXT = 3;
// The most rows laid out; past it the diff says how many it left out.
const MAX_ROWS = 5000;


/**
 * VersionsTab lists the versions of mock's data. onRestored gets the mock
 * after a restore. The dialogs and formats are the Studio's own, passed by
 * main.jsx.
 */
export function VersionsTab({ mock, onRestored, ConfirmDialog, ErrorNote, formatBytes, formatTime }) {
  // Viewers see the versions; restoring needs the editor role.
  const editable = useTeam().can('editor', mock.workspace_id);
  const [versions, setVersions] = useState(null);
  const [error, setError] = useState(null);
  const [older, setOlder] = useState(0);
  const [newer, setNewer] = useState(0);
  const [restoring, setRestoring] = useState(null);
  const [note, setNote] = useState('');

  const load = useCallback(async () => {
    try {
      const { versions: vs } = await api.admin('GET', `/mocks/${mock.id}/versions`);
      setVersions(vs);
      setError(null);
      // Compare the current data with the one before it, unless the
      // chosen ones are still kept.
      const kept = (n) => vs.some((v) => v.version === n);
      setNewer((n) => (kept(n) ? n : vs[0].version));
      setOlder((n) => (kept(n) ? n : (vs[1] || vs[0]).version));
    } catch (e) {
      setError(e);
    }
  }, [mock.id]);
  useEffect(() => {
    setOlder(0);
    setNewer(0);
    load();
  }, [load]);

  if (error && !versions) return <ErrorNote error={error} />;
  if (!versions) return <p aria-busy="true">Loading…</p>;
  const byNumber = (n) => versions.find((v) => v.version === n);
  const restore = async (v) => {
    const m = await api.admin('POST', `/mocks/${mock.id}/versions/${v.version}/restore`);
    setRestoring(null);
    onRestored(m);
    setNote(`Version ${v.version} restored: it is the mock's data again, as a new version.`);
    setNewer(0);
    setOlder(v.version);
    await load();
  };
  const choice = (label, value, set) => (
    <div>
      <label for={`diff-${label}`}>{label === 'older' ? 'Compare' : 'with'}</label>
      <select id={`diff-${label}`} value={value} onChange={(e) => set(Number(e.target.value))}>
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            Version {v.version}{v.current ? ' (current)' : ''}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <section aria-label="Versions" class="versions">
      <p class="hint">
        Every save of the data keeps the data it replaces. The newest versions are kept; a restore writes an old one
        again as a new version, so it can be undone too.
      </p>
      <div class="table-wrap">
        <table class="versions-list">
          <caption class="sr-only">Versions of the data, newest first</caption>
          <thead>
            <tr><th scope="col">Version</th><th scope="col">Written</th><th scope="col">Size</th><th scope="col">By</th><th scope="col"><span class="sr-only">Actions</span></th></tr>
          </thead>
          <tbody>
            {versions.map((v) => (
              <tr key={v.version} data-testid={`version-${v.version}`}>
                <th scope="row">{v.version}{v.current && <span class="badge">current</span>}</th>
                <td>{formatTime(v.created_at)}</td>
                <td>{formatBytes(v.size)}</td>
                <td>{versionActor(v.actor)}</td>
                <td>
                  {!v.current && editable && (
                    <button type="button" onClick={() => setRestoring(v)} aria-label={`Restore version ${v.version}`}>Restore</button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {note && <p class="notice" role="status">{note}</p>}
      <ErrorNote error={error} />
      <h2>Differences</h2>
      <div class="fields diff-choice">
        {choice('older', older, setOlder)}
        {choice('newer', newer, setNewer)}
      </div>
      {older > 0 && newer > 0 && byNumber(older) && byNumber(newer) && (
        <Diff mockID={mock.id} a={byNumber(older)} b={byNumber(newer)} ErrorNote={ErrorNote} formatBytes={formatBytes} />
      )}
      {restoring && (
        <ConfirmDialog title={`Restore version ${restoring.version}?`} confirm="Restore" onClose={() => setRestoring(null)}
          onConfirm={() => restore(restoring)}>
          <p>
            The data of version {restoring.version} ({formatBytes(restoring.size)}, written {formatTime(restoring.created_at)})
            becomes the mock's data again, as a new version: the next read gets it. The current data stays as a
            version, so this can be undone.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}

// pretty indents a JSON text, or returns it as it is when it is not JSON.
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2) + '\n';
  } catch {
    return text;
  }
}

function splitLines(s) {
  const lines = s.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * sideBySide lays out a line diff of a and b in rows of two columns: kept
 * lines on both sides, a removed run beside the added run that follows it.
 * Runs of kept lines longer than the context are folded into one row. It
 * returns null when the diff gave up (too different, too long).
 */
export function sideBySide(a, b) {
  const parts = diffLines(a, b, { timeout: DIFF_TIMEOUT_MS });
  if (!parts) return null;
  const rows = [];
  let ln = 1, rn = 1;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    const lines = splitLines(p.value);
    if (!p.added && !p.removed) {
      for (const line of lines) rows.push({ kind: 'same', l: line, ln: ln++, r: line, rn: rn++ });
    } else if (p.removed && parts[i + 1] && parts[i + 1].added) {
      const added = splitLines(parts[++i].value);
      for (let k = 0; k < Math.max(lines.length, added.length); k++) {
        rows.push({
          kind: 'changed',
          l: lines[k], ln: k < lines.length ? ln++ : null,
          r: added[k], rn: k < added.length ? rn++ : null,
        });
      }
    } else if (p.removed) {
      for (const line of lines) rows.push({ kind: 'changed', l: line, ln: ln++, r: undefined, rn: null });
    } else {
      for (const line of lines) rows.push({ kind: 'changed', l: undefined, ln: null, r: line, rn: rn++ });
    }
  }
  // Fold the kept lines far from any change.
  const near = new Array(rows.length).fill(false);
  rows.forEach((r, i) => {
    if (r.kind !== 'same') for (let k = Math.max(0, i - CONTEXT); k <= Math.min(rows.length - 1, i + CONTEXT); k++) near[k] = true;
  });
  const out = [];
  for (let i = 0; i < rows.length; i++) {
    if (near[i]) {
      out.push(rows[i]);
      continue;
    }
    let j = i;
    while (j < rows.length && !near[j]) j++;
    out.push({ kind: 'fold', count: j - i });
    i = j - 1;
  }
  return out;
}

function Diff({ mockID, a, b, ErrorNote, formatBytes }) {
  const [texts, setTexts] = useState(null);
  const [error, setError] = useState(null);
  const [format, setFormat] = useState(true);
  const tooLarge = a.size > MAX_DIFF_BYTES || b.size > MAX_DIFF_BYTES;
  useEffect(() => {
    setTexts(null);
    setError(null);
    if (tooLarge) return;
    let live = true;
    const get = (v) => api.admin('GET', `/mocks/${mockID}/versions/${v.version}/data`, { raw: true });
    Promise.all([get(a), get(b)]).then((t) => live && setTexts(t), (e) => live && setError(e));
    return () => { live = false; };
  }, [mockID, a.version, b.version]);
  const rows = useMemo(() => {
    if (!texts) return null;
    return format ? sideBySide(pretty(texts[0]), pretty(texts[1])) : sideBySide(texts[0], texts[1]);
  }, [texts, format]);

  if (tooLarge) {
    return <p class="hint">These versions are too large to compare here (over {formatBytes(MAX_DIFF_BYTES)}); use <code>decoy mock version-data</code> and a diff tool.</p>;
  }
  if (error) return <ErrorNote error={error} />;
  if (!texts) return <p aria-busy="true">Loading…</p>;
  if (!rows) return <p class="hint">These versions differ too much to compare here.</p>;
  const changed = rows.filter((r) => r.kind === 'changed');
  const removed = changed.filter((r) => r.ln !== null).length;
  const added = changed.filter((r) => r.rn !== null).length;
  const shown = rows.slice(0, MAX_ROWS);
  return (
    <div class="diff-wrap">
      <div class="row">
        <div class="check">
          <input type="checkbox" id="diff-format" checked={format} onChange={(e) => setFormat(e.target.checked)} />
          <label for="diff-format">Indent JSON before comparing</label>
        </div>
        <p class="hint grow" role="status" data-testid="diff-summary">
          {changed.length === 0 ? 'No differences.' : `${removed} line${removed === 1 ? '' : 's'} only in version ${a.version}, ${added} only in version ${b.version}.`}
        </p>
      </div>
      {changed.length > 0 && (
        <div class="table-wrap">
          <table class="diff" data-testid="diff">
            <caption class="sr-only">Version {a.version} on the left, version {b.version} on the right</caption>
            <colgroup><col class="ln" /><col /><col class="ln" /><col /></colgroup>
            <thead>
              <tr><th scope="col" colSpan={2}>Version {a.version}</th><th scope="col" colSpan={2}>Version {b.version}</th></tr>
            </thead>
            <tbody>
              {shown.map((r, i) => r.kind === 'fold' ? (
                <tr key={i} class="fold"><td colSpan={4}>{r.count} unchanged line{r.count === 1 ? '' : 's'}</td></tr>
              ) : (
                <tr key={i} class={r.kind}>
                  <td class="ln">{r.ln}</td>
                  <td class={r.kind === 'changed' && r.ln !== null ? 'del' : r.ln === null ? 'none' : ''}>
                    {r.kind === 'changed' && r.ln !== null && <span class="sr-only">removed: </span>}{r.l}
                  </td>
                  <td class="ln">{r.rn}</td>
                  <td class={r.kind === 'changed' && r.rn !== null ? 'ins' : r.rn === null ? 'none' : ''}>
                    {r.kind === 'changed' && r.rn !== null && <span class="sr-only">added: </span>}{r.r}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {rows.length > MAX_ROWS && <p class="hint">{rows.length - MAX_ROWS} more rows not shown.</p>}
    </div>
  );
}
