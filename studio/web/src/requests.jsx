// The Requests tab of a project (§13.2): the requests the project
// answered, newest first, live: the page loads the newest, then follows
// the journal's feed (GET …/requests/stream, Server-Sent Events) from the
// newest it showed, so that nothing answered in between is missed, and
// again after a lost connection. Filters by method, path and status; a
// request's details in a dialog; editors clear the journal (asking first).
import { useEffect, useRef, useState } from 'preact/hooks';
import * as api from './api.js';
import { ConfirmDialog, Dialog, ErrorNote, formatNumber } from './ui.jsx';
import { RoleNote } from './team.jsx';
import './requests.css';

// The most requests the page holds: the newest.
const KEPT = 500;
// The pause before following again after the feed was lost.
const RETRY_MS = 2000;

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const exactFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'long' });

/** requestName names a request as the tab shows it: GET /p/shop/users?limit=1 */
export const requestName = (e) => `${e.method} ${e.path}${e.query ? '?' + e.query : ''}`;

/** At shows when a request came: the time of day, the date in its title. */
function At({ value }) {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return <span>{String(value ?? '')}</span>;
  return <time dateTime={d.toISOString()} title={exactFormat.format(d)}>{timeFormat.format(d)}</time>;
}

/** Status shows an answer's status, coloured by its class. */
function Status({ code }) {
  return <span class={`request-status s${String(code)[0]}`}>{code}</span>;
}

// query is the filters' query string: method, path, status.
function query(f) {
  return Object.entries(f).filter(([, v]) => v).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
}

/**
 * RequestsTab is the journal of project; editable shows the button that
 * clears it.
 */
export function RequestsTab({ project, editable }) {
  const [entries, setEntries] = useState(null);
  const [error, setError] = useState(null);
  const [live, setLive] = useState('');
  const [method, setMethod] = useState('');
  const [path, setPath] = useState('');
  const [status, setStatus] = useState('');
  const [filter, setFilter] = useState({});
  const [shown, setShown] = useState(null);
  const [clearing, setClearing] = useState(false);
  const [note, setNote] = useState('');

  useEffect(() => {
    setEntries(null);
    setError(null);
    setLive('');
    const ctrl = new AbortController();
    const q = query(filter);
    let last = '';
    let retry = 0;
    // Follows the feed after last, again after RETRY_MS when it is lost,
    // until the tab goes or its filters change.
    const followFeed = async () => {
      while (!ctrl.signal.aborted) {
        try {
          await api.follow(`/projects/${project.id}/requests/stream${q ? '?' + q : ''}`, {
            lastID: last || '0-0',
            signal: ctrl.signal,
            onOpen: () => setLive('live'),
            onEvent: (name, data, id) => {
              if (name !== 'request') return;
              const e = JSON.parse(data);
              last = id || e.id;
              setEntries((all) => [e, ...(all || [])].slice(0, KEPT));
            },
          });
        } catch (err) {
          if (ctrl.signal.aborted) return;
          if (err.status && err.status !== 503 && err.status !== 429) {
            setLive('');
            setError(err);
            return;
          }
        }
        if (ctrl.signal.aborted) return;
        setLive('lost');
        await new Promise((r) => { retry = setTimeout(r, RETRY_MS); });
      }
    };
    api.admin('GET', `/projects/${project.id}/requests?limit=100${q ? '&' + q : ''}`).then(
      (page) => {
        if (ctrl.signal.aborted) return;
        const rs = page.requests || [];
        setEntries(rs);
        last = rs.length ? rs[0].id : '';
        followFeed();
      },
      (err) => !ctrl.signal.aborted && setError(err),
    );
    return () => {
      ctrl.abort();
      clearTimeout(retry);
    };
  }, [project.id, query(filter)]);

  const apply = (e) => {
    e.preventDefault();
    setNote('');
    setFilter({ method, path: path.trim(), status: status.trim() });
  };
  const reset = () => {
    setMethod('');
    setPath('');
    setStatus('');
    setNote('');
    setFilter({});
  };
  const filtered = Object.values(filter).some(Boolean);

  return (
    <section aria-labelledby="requests-title" class="requests-tab">
      <div class="title-row">
        <h2 id="requests-title">Requests</h2>
        {editable && (
          <button type="button" class="danger" onClick={() => { setNote(''); setClearing(true); }} disabled={!entries || entries.length === 0}>
            Clear
          </button>
        )}
      </div>
      <p class="hint">
        What the project answered through its routes, and the reads of its mocks at <code>/mock/{'{id}'}</code>, newest
        first; the server keeps the newest of each project (<code class="nowrap">--journal-size</code>, 1,000 by default). Token headers,{' '}
        <code>auth_token</code>, <code>Authorization</code> and cookies show as REDACTED.
      </p>
      {!editable && <RoleNote need="editor" what="clearing the requests" workspaceID={project.workspace_id} />}
      <form class="filter-row request-filters" onSubmit={apply} aria-label="Filter the requests">
        <div>
          <label for="request-method">Method</label>
          <select id="request-method" value={method} onChange={(e) => setMethod(e.target.value)}>
            <option value="">Any</option>
            {METHODS.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </div>
        <div class="request-path-filter">
          <label for="request-path">Path</label>
          <input id="request-path" class="mono" autocomplete="off" spellcheck={false} placeholder="/p/shop/users*" value={path}
            onInput={(e) => setPath(e.target.value)} aria-describedby="request-path-hint" />
        </div>
        <div>
          <label for="request-status">Status</label>
          <input id="request-status" inputMode="numeric" pattern="[1-5][0-9][0-9]" title="An HTTP status, such as 404" placeholder="404"
            value={status} onInput={(e) => setStatus(e.target.value)} />
        </div>
        <div class="request-filter-buttons">
          <button type="submit" class="primary">Filter</button>
          {filtered && <button type="button" onClick={reset}>Show all</button>}
        </div>
      </form>
      <p class="hint" id="request-path-hint">The path as sent; end it with <code>*</code> for every path under it.</p>
      {note && <p class="notice" role="status">{note}</p>}
      <ErrorNote error={error} />
      <p class="live hint" role="status" data-testid="live">
        {live === 'live' && <><span class="live-dot" aria-hidden="true" />Live: new requests appear at the top as they are answered.</>}
        {live === 'lost' && 'The live feed was lost; following again…'}
      </p>
      {!entries && !error && <p aria-busy="true">Loading…</p>}
      {entries && entries.length === 0 && (
        <p data-testid="no-requests">
          {filtered ? 'No request matches these filters yet.' : 'No requests yet: they appear here as the project answers them.'}
        </p>
      )}
      {entries && entries.length > 0 && (
        <table class="mocks requests">
          <caption class="sr-only">Requests to {project.name}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Status</th>
              <th scope="col">Duration</th><th scope="col"><span class="sr-only">Details</span></th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id} data-request={e.id}>
                <td data-label="Time"><At value={e.at} /></td>
                <td data-label="Method"><span class="method">{e.method}</span></td>
                <td data-label="Path"><span class="mono request-path">{e.path}{e.query ? <span class="hint">?{e.query}</span> : null}</span></td>
                <td data-label="Status"><Status code={e.status} /></td>
                <td data-label="Duration">{formatNumber(e.duration_ms)} ms</td>
                <td data-label="Details">
                  <button type="button" onClick={() => setShown(e)} aria-label={`Details of ${requestName(e)}`}>Details</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {shown && <RequestDialog entry={shown} onClose={() => setShown(null)} />}
      {clearing && (
        <ConfirmDialog title="Clear the requests?" confirm="Clear" danger onClose={() => setClearing(false)}
          onConfirm={async () => {
            await api.admin('DELETE', `/projects/${project.id}/requests`);
            setEntries([]);
            setClearing(false);
            setNote('The requests were cleared.');
          }}>
          <p>
            Every request kept for <strong>{project.name}</strong> is deleted, for everyone who looks at it. Requests
            answered from now on are kept as before.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}

/** RequestDialog shows one request whole. */
function RequestDialog({ entry: e, onClose }) {
  const headers = Object.entries(e.headers || {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <Dialog title={`${e.method} ${e.path}`} onClose={onClose} labelledBy="request-title">
      <dl class="request-facts">
        <div><dt>Status</dt><dd><Status code={e.status} /></dd></div>
        <div><dt>When</dt><dd><time dateTime={e.at}>{exactFormat.format(new Date(e.at))}</time></dd></div>
        <div><dt>Duration</dt><dd>{formatNumber(e.duration_ms)} ms</dd></div>
        <div><dt>Client</dt><dd class="mono">{e.client || '–'}</dd></div>
        <div><dt>Route</dt><dd class="mono small">{e.route_id || 'none'}</dd></div>
        <div><dt>Mock</dt><dd>{e.mock_id ? <a href={`#/mocks/${e.mock_id}`} class="mono small">{e.mock_id}</a> : 'none'}</dd></div>
        {e.rule && <div><dt>Rule</dt><dd>{e.rule}</dd></div>}
      </dl>
      <h3>Query</h3>
      {e.query ? <output class="code" data-testid="request-query">{e.query}</output> : <p class="hint">None.</p>}
      <h3>Headers</h3>
      <table class="request-headers" data-testid="request-headers">
        <caption class="sr-only">Request headers</caption>
        <tbody>
          {headers.map(([name, value]) => (
            <tr key={name}><th scope="row" class="mono">{name}</th><td class="mono">{value}</td></tr>
          ))}
        </tbody>
      </table>
      <h3>Body</h3>
      {e.body ? <pre class="code body" data-testid="request-body">{e.body}</pre> : <p class="hint">{e.body_cut ? 'Not kept: the answer did not read it.' : 'None.'}</p>}
      {e.body && e.body_cut && <p class="hint">Cut: only its first 64 KiB were kept.</p>}
      <div class="actions">
        <button type="button" onClick={onClose} autofocus>Close</button>
      </div>
    </Dialog>
  );
}
