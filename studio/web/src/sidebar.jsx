// Decoy Studio's sidebar: the workspace switcher, the projects of the
// chosen workspace, and the mocks of the chosen project, so that moving
// between mocks takes one click. Below 800 px wide it folds, with the
// header's pages, into the header's menu button (open).
import { useEffect, useState } from 'preact/hooks';
import * as api from './api.js';
import { WorkspaceSwitcher, useTeam } from './team.jsx';
import { NewProject, useProjects } from './projects.jsx';
import { ErrorNote, go } from './ui.jsx';

// How many mocks the sidebar lists; the Mocks page has them all.
const SHOWN = 50;

/**
 * Sidebar is the navigation beside the pages. projectID is the chosen
 * project (of the list page, or of the mock shown), mockID the mock shown,
 * and changed anything that changes when the list may have.
 */
export function Sidebar({ open, route, projectID, mockID }) {
  const team = useTeam();
  const ws = team.workspace;
  const wsID = ws ? ws.id : '';
  const { projects, error, reload } = useProjects(wsID);
  const [mocks, setMocks] = useState(null);
  const showMocks = route.page !== 'list';
  const project = (projects || []).find((p) => p.id === projectID) || null;

  useEffect(() => {
    if (!showMocks || !wsID) return setMocks(null);
    let live = true;
    api.listMocks({ workspace_id: wsID, project_id: projectID }).then(
      (m) => live && setMocks(m.reverse()),
      () => live && setMocks([]),
    );
    return () => { live = false; };
  }, [wsID, projectID, showMocks, route.page, route.id]);

  // Mocks of one name are told apart: by their project (when the list is
  // of every project) and the start of their id.
  const names = new Map();
  for (const m of (mocks || []).slice(0, SHOWN)) if (m.name) names.set(m.name, (names.get(m.name) || 0) + 1);
  const twins = new Set([...names].filter(([, n]) => n > 1).map(([name]) => name));
  const projectName = (id) => ((projects || []).find((p) => p.id === id) || {}).name;
  const whereAndID = (m) => [!project && projectName(m.project_id), m.id.slice(0, 8)].filter(Boolean).join(' · ');

  return (
    <aside class={`sidebar${open ? ' open' : ''}`} aria-label="Projects and mocks">
      <div class="sidebar-body" id="sidebar-body">
        <WorkspaceSwitcher />
        {ws && (
          <nav aria-labelledby="projects-title" class="side-section">
            <h2 id="projects-title">Projects of {ws.name}</h2>
            <ErrorNote error={error} />
            <ul class="project-list">
              <li><a href="#/" aria-current={route.page === 'list' && !route.project ? 'page' : undefined}>All projects</a></li>
              {(projects || []).map((p) => (
                <li key={p.id}>
                  <a href={`#/projects/${p.id}`} aria-current={route.page === 'list' && p.id === route.project ? 'page' : undefined}>{p.name}</a>
                </li>
              ))}
            </ul>
            {team.can('editor') && <NewProject workspaceID={wsID} onCreated={(p) => reload().then(() => go(`#/projects/${p.id}`))} />}
          </nav>
        )}
        {showMocks && mocks && (
          <nav aria-labelledby="side-mocks-title" class="side-section">
            <h2 id="side-mocks-title">{project ? `In ${project.name}` : 'In all projects'}</h2>
            {mocks.length === 0 && <p class="hint">No mocks yet.</p>}
            <ul class="mock-list">
              {mocks.slice(0, SHOWN).map((m) => (
                <li key={m.id}>
                  <a href={`#/mocks/${m.id}`} aria-current={m.id === mockID ? 'page' : undefined}>
                    {m.name || m.id}
                    {twins.has(m.name) && <span class="twin" data-testid="mock-twin">{whereAndID(m)}</span>}
                  </a>
                </li>
              ))}
            </ul>
            {mocks.length > SHOWN && <a href={projectID ? `#/projects/${projectID}` : '#/'}>All {mocks.length} mocks</a>}
          </nav>
        )}
      </div>
    </aside>
  );
}
