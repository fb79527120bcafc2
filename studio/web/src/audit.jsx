// The audit log of the chosen workspace: every change, newest first, a
// page at a time (GET /admin/v1/workspaces/{ws}/audit?limit=&cursor=).
import { useEffect, useState } from 'preact/hooks';
import { actorLabel } from './actor.js';
import * as api from './api.js';
import { useTeam } from './team.jsx';
import { ErrorNote, formatTime } from './ui.jsx';

const PAGE = 50;

/** entriesOf returns the entries of an answer of the audit log. */
function entriesOf(a) {
  if (Array.isArray(a)) return a;
  for (const k of ['entries', 'audit', 'events', 'items']) if (a && Array.isArray(a[k])) return a[k];
  return [];
}


function targetLabel(t) {
  if (!t) return '';
  const what = t.name || t.id || '';
  return what ? `${t.kind} ${what}` : t.kind;
}

/** when is a time to the second, in UTC, for the log. */
function when(s) {
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return String(s ?? '');
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export function AuditPage() {
  const team = useTeam();
  const ws = team.workspace;
  // cursors[i] is the cursor of page i; the first page has none.
  const [cursors, setCursors] = useState(['']);
  const [page, setPage] = useState(0);
  const [answer, setAnswer] = useState(null);
  const [error, setError] = useState(null);
  // Asking again for the same page: Refresh.
  const [asked, setAsked] = useState(0);

  useEffect(() => {
    setCursors(['']);
    setPage(0);
  }, [ws && ws.id]);
  useEffect(() => {
    if (!ws) return;
    let live = true;
    setAnswer(null);
    setError(null);
    const c = cursors[page];
    api.admin('GET', `/workspaces/${ws.id}/audit?limit=${PAGE}${c ? '&cursor=' + encodeURIComponent(c) : ''}`).then(
      (a) => {
        if (!live) return;
        setAnswer({ entries: entriesOf(a), next: (a && a.next_cursor) || '' });
      },
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [ws && ws.id, page, cursors[page], asked]);

  if (!ws) return <main id="main"><h1>Audit log</h1><p>You belong to no workspace yet.</p></main>;
  const older = () => {
    if (!answer || !answer.next) return;
    setCursors([...cursors.slice(0, page + 1), answer.next]);
    setPage(page + 1);
  };
  const refresh = () => {
    setCursors(['']);
    setPage(0);
    setAsked((n) => n + 1);
  };

  return (
    <main id="main">
      <div class="title-row">
        <h1>Audit log of {ws.name}</h1>
        <button type="button" onClick={refresh}>Refresh</button>
      </div>
      <p class="hint">Every change to this workspace, newest first: who made it, what, to what, when and from which address. Reads are not recorded.</p>
      <ErrorNote error={error} />
      {!answer && !error && <p aria-busy="true">Loading…</p>}
      {answer && answer.entries.length === 0 && <p>Nothing recorded yet.</p>}
      {answer && answer.entries.length > 0 && (
        <table class="mocks audit" data-testid="audit">
          <caption class="sr-only">Changes, newest first</caption>
          <thead>
            <tr><th scope="col">Time</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Address</th></tr>
          </thead>
          <tbody>
            {answer.entries.map((e, i) => (
              <tr key={`${e.at}-${i}`} data-action={e.action}>
                <td data-label="Time" class="nowrap">{when(e.at)}</td>
                <td data-label="Actor">{actorLabel(e.actor)}</td>
                <td data-label="Action" class="mono">{e.action}</td>
                <td data-label="Target">{targetLabel(e.target)}</td>
                <td data-label="Address" class="mono small">{e.ip}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages of the audit log">
        <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>Newer</button>
        <span>Page {page + 1}</span>
        <button type="button" disabled={!answer || !answer.next} onClick={older}>Older</button>
      </nav>
    </main>
  );
}
