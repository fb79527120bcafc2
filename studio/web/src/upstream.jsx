// A project's upstream and mode (§14), on the project's page: the real
// backend the project stands in for, and whether requests its routes do
// not answer go there (passthrough), every request does while its GET
// answers are recorded as routes (record), or none does (mock). Editors
// change both.
import { useEffect, useRef, useState } from 'preact/hooks';
import * as api from './api.js';
import { ErrorNote } from './ui.jsx';

const MODES = [
  { value: 'mock', label: 'Mock', hint: 'Only routes answer; other requests get 404.' },
  { value: 'passthrough', label: 'Pass-through', hint: 'Requests no route matches go to the upstream, and its answer comes back.' },
  { value: 'record', label: 'Record', hint: 'Every request goes to the upstream; each GET answer with a JSON body is kept as a mock with a route at its path.' },
];

/** modeLabel names a mode as the page shows it. */
const modeLabel = (m) => (MODES.find((x) => x.value === m) || MODES[0]).label;

/**
 * ProjectUpstream shows a project's upstream and mode; editable lets the
 * caller change them (onChanged reloads the projects).
 */
export function ProjectUpstream({ project, editable, onChanged }) {
  const [editing, setEditing] = useState(false);
  const [upstream, setUpstream] = useState(project.upstream || '');
  const [mode, setMode] = useState(project.mode || 'mock');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState('');
  const input = useRef(null);
  useEffect(() => {
    setEditing(false);
    setNote('');
    setError(null);
  }, [project.id]);
  useEffect(() => {
    if (editing && input.current) input.current.focus();
  }, [editing]);
  if (project.mode === undefined) return null; // a server without pass-through
  const open = () => {
    setUpstream(project.upstream || '');
    setMode(project.mode || 'mock');
    setNote('');
    setError(null);
    setEditing(true);
  };
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const p = await api.admin('PATCH', `/projects/${project.id}`, { body: JSON.stringify({ upstream: upstream.trim(), mode }) });
      await onChanged();
      setEditing(false);
      setNote(p.mode === 'mock' ? 'Saved: only routes answer.' : `Saved: ${modeLabel(p.mode).toLowerCase()} to ${p.upstream}.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="project-upstream">
      {!editing && (
        <p class="hint">
          Upstream{' '}
          {project.upstream ? <code data-testid="upstream">{project.upstream}</code> : <span data-testid="upstream">none</span>}
          {' · '}Mode <strong data-testid="mode">{modeLabel(project.mode)}</strong>
          {editable && <>{' '}<button type="button" class="link" onClick={open}>Change upstream</button></>}
        </p>
      )}
      {editing && (
        <form onSubmit={submit} class="inline-form" aria-label="Change the upstream">
          <label for="project-upstream">Upstream URL</label>
          <div class="row">
            <input id="project-upstream" ref={input} class="mono" type="url" maxLength={2048} autocomplete="off" spellcheck={false}
              placeholder="https://api.example.com/v1" value={upstream} onInput={(e) => setUpstream(e.target.value)}
              aria-describedby="project-upstream-hint" />
          </div>
          <p class="hint" id="project-upstream-hint">
            The base URL of the real backend (http or https); request paths go under it. Empty: none, which only mode Mock allows.
          </p>
          <fieldset class="modes">
            <legend>Mode</legend>
            {MODES.map((m) => (
              <label key={m.value} class="mode">
                <input type="radio" name="project-mode" value={m.value} checked={mode === m.value} onChange={() => setMode(m.value)} />
                {' '}{m.label} <span class="hint">{m.hint}</span>
              </label>
            ))}
          </fieldset>
          <div class="row">
            <button type="submit" class="primary" disabled={busy}>Save upstream</button>
            <button type="button" onClick={() => { setEditing(false); setError(null); }}>Cancel</button>
          </div>
          <ErrorNote error={error} />
        </form>
      )}
      {note && <p class="notice" role="status">{note}</p>}
    </div>
  );
}
