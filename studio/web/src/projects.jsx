// The mocks of the chosen workspace, project by project: the project list,
// a new project, the mocks of one project or of all, searched on the
// server (GET /admin/v1/mocks?workspace_id=&project_id=&q=), and a
// project's page: its base URL and slug, its mocks, its routes and the
// requests it answered.
import { useEffect, useRef, useState } from 'preact/hooks';
import * as api from './api.js';
import { RoutesTab } from './routes.jsx';
import { ProjectUpstream } from './upstream.jsx';
import { RequestsTab } from './requests.jsx';
import { items, useTeam } from './team.jsx';
import { CopyButton, ErrorNote, Time, dataSize, formatNumber, go } from './ui.jsx';

const PAGE = 20;

/** useProjects loads the projects of a workspace; reload after a change. */
export function useProjects(workspaceID) {
  const [projects, setProjects] = useState(null);
  const [error, setError] = useState(null);
  const load = () => {
    if (!workspaceID) {
      setProjects([]);
      return Promise.resolve([]);
    }
    return api.admin('GET', `/workspaces/${workspaceID}/projects`).then(
      (a) => {
        const ps = items(a, 'projects').slice().sort((x, y) => (x.name === 'default' ? -1 : y.name === 'default' ? 1 : String(x.name).localeCompare(String(y.name))));
        setProjects(ps);
        setError(null);
        return ps;
      },
      (e) => {
        setError(e);
        return [];
      },
    );
  };
  useEffect(() => {
    setProjects(null);
    load();
  }, [workspaceID]);
  return { projects, error, reload: load };
}

/**
 * ProjectSelect picks the project of the chosen workspace a new mock goes
 * to; it renders nothing while there is no workspace.
 */
export function ProjectSelect({ value, onChange, id = 'project-select' }) {
  const team = useTeam();
  const ws = team.workspace;
  const { projects, error } = useProjects(ws && ws.id);
  useEffect(() => {
    // The project in the route, when it is one of these, else the first.
    if (projects && projects.length && !projects.some((p) => p.id === value)) onChange(projects[0].id);
  }, [projects]);
  if (!ws) return null;
  return (
    <div>
      <label for={id}>Project</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)} disabled={!projects}>
        {(projects || []).map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
      </select>
      <ErrorNote error={error} />
    </div>
  );
}

/** NewProject is the form that adds a project to the workspace. */
export function NewProject({ workspaceID, onCreated }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const input = useRef(null);
  useEffect(() => {
    if (open && input.current) input.current.focus();
  }, [open]);
  if (!open) return <button type="button" onClick={() => setOpen(true)}>New project</button>;
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const p = await api.admin('POST', `/workspaces/${workspaceID}/projects`, { body: JSON.stringify({ name: name.trim() }) });
      setName('');
      setOpen(false);
      onCreated(p);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="inline-form" aria-label="New project">
      <label for="new-project-name">Project name</label>
      <div class="row">
        <input id="new-project-name" ref={input} required maxLength={200} value={name} onInput={(e) => setName(e.target.value)} />
        <button type="submit" class="primary" disabled={busy}>Create project</button>
        <button type="button" onClick={() => setOpen(false)}>Cancel</button>
      </div>
      <ErrorNote error={error} />
    </form>
  );
}

/** MocksPage lists the mocks of every project of the chosen workspace. */
export function MocksPage() {
  const team = useTeam();
  const ws = team.workspace;
  const { projects } = useProjects(ws ? ws.id : '');
  return (
    <main id="main">
      <div class="title-row">
        <h1>Mocks</h1>
        {team.can('editor') && <a class="button primary" href="#/new">New mock</a>}
      </div>
      <MockList projectID="" projects={projects} />
    </main>
  );
}

/**
 * ProjectPage is a project of the chosen workspace: its name, base URL and
 * slug (editors change it), and the tab chosen: its mocks, its routes, or
 * the requests it answered.
 */
export function ProjectPage({ projectID, tab }) {
  const team = useTeam();
  const ws = team.workspace;
  const { projects, error, reload } = useProjects(ws ? ws.id : '');
  const project = (projects || []).find((p) => p.id === projectID) || null;
  const editable = team.can('editor', project ? project.workspace_id : undefined);
  const missing = projects && !project;
  return (
    <main id="main">
      <div class="title-row">
        <h1>{project ? project.name : missing ? 'Project not found' : 'Project'}</h1>
        {project && editable && tab === 'mocks' && <a class="button primary" href={`#/new/${project.id}`}>New mock</a>}
      </div>
      <ErrorNote error={error} />
      {!projects && !error && <p aria-busy="true">Loading…</p>}
      {missing && <p>{ws ? `No project of ${ws.name} has this id.` : 'You belong to no workspace yet.'} <a href="#/">Back to the mocks</a></p>}
      {project && (
        <>
          <ProjectAddress project={project} editable={editable} onChanged={reload} />
          <ProjectUpstream project={project} editable={editable} onChanged={reload} />
          <nav class="tabs" aria-label="Project sections">
            <a href={`#/projects/${project.id}`} aria-current={tab === 'mocks' ? 'page' : undefined}>Mocks</a>
            <a href={`#/projects/${project.id}/routes`} aria-current={tab === 'routes' ? 'page' : undefined}>Routes</a>
            <a href={`#/projects/${project.id}/requests`} aria-current={tab === 'requests' ? 'page' : undefined}>Requests</a>
          </nav>
          {tab === 'routes' && <RoutesTab project={project} editable={editable} />}
          {tab === 'requests' && <RequestsTab project={project} editable={editable} />}
          {tab === 'mocks' && <MockList projectID={project.id} projects={projects} />}
        </>
      )}
    </main>
  );
}

/**
 * ProjectAddress shows where a project answers at its routes: its base
 * URL, to copy, and its slug, which editors change (onChanged reloads the
 * projects).
 */
function ProjectAddress({ project, editable, onChanged }) {
  const [editing, setEditing] = useState(false);
  const [slug, setSlug] = useState(project.slug || '');
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
  if (!project.base_url) return null;
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const p = await api.admin('PATCH', `/projects/${project.id}`, { body: JSON.stringify({ slug: slug.trim() }) });
      await onChanged();
      setEditing(false);
      setNote(`The slug is now ${p.slug}: the project answers at ${p.base_url}, and no longer at its old address.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="project-address">
      <p class="url">
        <span class="field-label inline">Base URL</span>{' '}
        <span class="mono" data-testid="base-url">{project.base_url}</span> <CopyButton text={project.base_url} label="Copy base URL" />
      </p>
      {!editing && (
        <p class="hint">
          Slug <code data-testid="slug">{project.slug}</code>
          {editable && <>{' '}<button type="button" class="link" onClick={() => { setSlug(project.slug); setNote(''); setError(null); setEditing(true); }}>Change slug</button></>}
        </p>
      )}
      {editing && (
        <form onSubmit={submit} class="inline-form" aria-label="Change the slug">
          <label for="project-slug">Slug</label>
          <div class="row">
            <input id="project-slug" ref={input} class="mono" required maxLength={63} autocomplete="off" spellcheck={false} value={slug}
              onInput={(e) => setSlug(e.target.value)} aria-describedby="project-slug-hint" />
            <button type="submit" class="primary" disabled={busy}>Save slug</button>
            <button type="button" onClick={() => { setEditing(false); setError(null); }}>Cancel</button>
          </div>
          <p class="hint" id="project-slug-hint">
            1 to 63 characters: a–z, 0–9 and -, not starting or ending with -. Unique on this server. Apps that use the
            old base URL get 404 from then on.
          </p>
          <ErrorNote error={error} />
        </form>
      )}
      {note && <p class="notice" role="status">{note}</p>}
    </div>
  );
}

/**
 * MockList lists the mocks of the chosen workspace: of the project
 * projectID, or of all its projects when empty. projects names them.
 */
function MockList({ projectID, projects }) {
  const team = useTeam();
  const ws = team.workspace;
  const wsID = ws ? ws.id : '';
  const [mocks, setMocks] = useState(null);
  const [usage, setUsage] = useState({});
  const [error, setError] = useState(null);
  const [q, setQ] = useState('');
  const [page, setPage] = useState(0);
  const asked = useRef(0);

  // The server searches: each change of the search, the project or the
  // workspace asks it again, a moment after the last keystroke, and only
  // the answer to the latest question is shown. Until it comes, the list
  // of the previous question is gone, so that it is never taken for the
  // answer.
  useEffect(() => {
    const n = ++asked.current;
    const t = setTimeout(() => {
      api.listMocks({ workspace_id: wsID, project_id: projectID, q: q.trim() }).then(
        (m) => {
          if (n !== asked.current) return;
          setMocks(m.reverse());
          setError(null);
        },
        (e) => n === asked.current && setError(e),
      );
    }, q ? 200 : 0);
    return () => clearTimeout(t);
  }, [wsID, projectID, q]);
  useEffect(() => {
    setMocks(null);
    setPage(0);
  }, [wsID, projectID]);

  const all = mocks || [];
  const pages = Math.max(1, Math.ceil(all.length / PAGE));
  const current = all.slice(page * PAGE, page * PAGE + PAGE);
  const projectName = (id) => ((projects || []).find((p) => p.id === id) || { name: '' }).name;
  const project = projectID ? (projects || []).find((p) => p.id === projectID) : null;
  const newMock = projectID ? `#/new/${projectID}` : '#/new';

  useEffect(() => {
    // This month's usage, for the rows on screen only.
    for (const m of current) {
      if (usage[m.id] !== undefined) continue;
      api.admin('GET', `/mocks/${m.id}/usage`).then(
        (u) => setUsage((all) => ({ ...all, [m.id]: u })),
        () => setUsage((all) => ({ ...all, [m.id]: null })),
      );
    }
  }, [current.map((m) => m.id).join()]);

  return (
    <>
      <ErrorNote error={error} />
      <div class="search">
        <label for="search">Search by name or id</label>
        <input id="search" type="search" value={q} onInput={(e) => { setQ(e.target.value); setPage(0); setMocks(null); }}
          aria-describedby="search-hint" />
        <p class="hint" id="search-hint">{project ? `In the project ${project.name}.` : ws ? `In every project of ${ws.name}.` : ''}</p>
      </div>
      {!mocks && !error && <p aria-busy="true">{q.trim() ? 'Searching…' : 'Loading…'}</p>}
      {mocks && all.length === 0 && (q.trim() || !team.can('editor') ? <p>{q.trim() ? 'No mock matches.' : 'No mocks yet.'}</p> : (
        <div class="card empty" data-testid="empty-state">
          <h2>No mocks {project ? `in ${project.name}` : ''} yet: start with one of these</h2>
          <ul>
            <li><a href={newMock}>Paste JSON or load a file</a>: a mock serves it as it is, with filters, order and paging.</li>
            <li><a href="#/generate">Generate data from a template</a>: fake people, orders or anything, as many records as you ask.</li>
            <li><a href="#/transfer">Import an OpenAPI description</a> (or a json-server db.json, or a Decoy export): its operations answer at their own paths, a mock for each resource.</li>
          </ul>
        </div>
      ))}
      {current.length > 0 && (
        <table class="mocks">
          <caption class="sr-only">Mocks, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>{ws && !projectID && <th scope="col">Project</th>}<th scope="col">Id</th><th scope="col">Private</th>
              <th scope="col">Size</th><th scope="col">Updated</th><th scope="col">This month</th>
            </tr>
          </thead>
          <tbody>
            {current.map((m) => {
              const u = usage[m.id];
              return (
                <tr key={m.id}>
                  <td data-label="Name"><a href={`#/mocks/${m.id}`}>{m.name || '(unnamed)'}</a></td>
                  {ws && !projectID && <td data-label="Project">{projectName(m.project_id)}</td>}
                  <td data-label="Id" class="mono small">{m.id}</td>
                  <td data-label="Private">{m.private ? 'yes' : 'no'}</td>
                  <td data-label="Size">{dataSize(m)}</td>
                  <td data-label="Updated"><Time value={m.updated_at} /></td>
                  <td data-label="This month">
                    {u === undefined ? '…' : u === null ? '?' : `${formatNumber(u.month.used)}${u.month.limit ? ' of ' + formatNumber(u.month.limit) : ''}`}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {pages > 1 && (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>Previous</button>
          <span>Page {page + 1} of {pages}</span>
          <button type="button" disabled={page + 1 >= pages} onClick={() => setPage(page + 1)}>Next</button>
        </nav>
      )}
    </>
  );
}
