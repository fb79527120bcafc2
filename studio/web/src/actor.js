// Who made a change, as the audit log and a mock's versions show it
// (§6.4): a user, a key, the server administrator, or the server itself
// acting for a project (recording, whose label says so).

/** actorLabel is the audit log's text for an entry's actor. */
export function actorLabel(actor) {
  if (!actor) return '';
  if (actor.kind === 'server_admin') return actor.label ? `server (${actor.label})` : 'server administrator';
  if (actor.kind === 'key') return `key ${actor.label || actor.id}`;
  return actor.label || actor.id || actor.kind;
}

/** versionActor is a version's text for who wrote it. */
export function versionActor(a) {
  if (!a) return 'admin token';
  if (a.kind === 'server_admin') return a.label ? `server (${a.label})` : 'admin token';
  return a.label || a.id || a.kind;
}
