// The Studio's calls to Decoy: the session endpoint and the admin API,
// authorized by the session cookie (sent by the browser, unreadable here)
// and the session's CSRF token (kept in memory only, never in storage).

let csrf = '';
// who is the person of the session this page works for: the user's id, ''
// for the server admin, null before the page knows a session.
let who = null;

/** ApiError is an answer of the server that is not a success. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function errorOf(res) {
  let msg = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (body && typeof body.error === 'string') msg = body.error;
  } catch {
    // not JSON: the status says it
  }
  return new ApiError(res.status, msg);
}

/** MIN_PASSWORD is the fewest characters the server takes in a password. */
export const MIN_PASSWORD = 12;

/**
 * onSignedOut is called when the server no longer knows the session, with
 * why when the Studio knows it (else the sign-in page says the session
 * ended).
 */
export let onSignedOut = () => {};
export function setSignedOutHandler(f) {
  onSignedOut = f;
}

/** sessionEnded forgets the session the server ended, and says why. */
export function sessionEnded(why) {
  csrf = '';
  onSignedOut(why);
}

/**
 * session asks the server whether this browser is signed in, and learns the
 * CSRF token when it is.
 */
export async function session() {
  const body = await askSession();
  learn(body);
  return body;
}

// askSession asks the server whether this browser is signed in, and as whom.
async function askSession() {
  const res = await fetch('/studio/session', { credentials: 'same-origin', cache: 'no-store' });
  if (!res.ok) throw await errorOf(res);
  return res.json();
}

// learn keeps the CSRF token of a session the server gave, and whose it is.
function learn(body) {
  csrf = body.signed_in ? body.csrf_token : '';
  who = body.signed_in ? body.user_id || '' : null;
}

/**
 * signedInAgain is called after a 403: another tab may have signed in
 * again, so that this page's CSRF token is the old session's. When the
 * browser's session is the same person's, it learns the new token and
 * answers true: the call may be sent once more. When it is someone else's
 * (or this page knew no session), the call is not sent as them, nor is any
 * later one: the page keeps whom it was made for and no token, and goes to
 * the sign-in page, saying why, until it signs in or is reloaded.
 */
async function signedInAgain() {
  const s = await askSession();
  if (!s.signed_in) {
    learn(s);
    return false;
  }
  if (who !== null && (s.user_id || '') === who) {
    learn(s);
    return true;
  }
  if (who !== null) sessionEnded('Another tab signed in as someone else: reload to continue as them, or sign in again here.');
  else csrf = '';
  return false;
}

/**
 * signIn opens a session with credentials: {token} (the admin token) or
 * {email, password} (a user).
 */
export async function signIn(credentials) {
  const res = await fetch('/studio/session', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(credentials),
  });
  if (!res.ok) throw await errorOf(res);
  const body = await res.json();
  learn({ signed_in: true, ...body });
  return body;
}

export async function signOut() {
  const res = await fetch('/studio/session', {
    method: 'DELETE',
    credentials: 'same-origin',
    headers: { 'X-CSRF-Token': csrf },
  });
  learn({ signed_in: false });
  if (!res.ok && res.status !== 401) throw await errorOf(res);
}

/**
 * admin calls the admin API; path starts after /admin/v1. The answer is
 * JSON, or its text with raw, or a Blob with raw 'blob'.
 */
export async function admin(method, path, { body, contentType, raw } = {}) {
  const send = () => {
    const headers = { 'X-CSRF-Token': csrf };
    if (body !== undefined) headers['Content-Type'] = contentType || 'application/json';
    return fetch('/admin/v1' + path, { method, headers, body, credentials: 'same-origin', cache: 'no-store' });
  };
  let res = await send();
  if (res.status === 403 && await signedInAgain()) res = await send();
  if (res.status === 401) {
    csrf = '';
    onSignedOut();
  }
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return null;
  if (raw === 'blob') return res.blob();
  return raw ? res.text() : res.json();
}

/**
 * liveData reads a mock's live data from the admin API: {text, live},
 * where live is the Decoy-Live header ("version": the data is the current
 * version's; "changed": writes through routes changed it since). With
 * headOnly the body is not read (a large document): text is null.
 */
export async function liveData(id, { headOnly = false } = {}) {
  const path = `/mocks/${encodeURIComponent(id)}/data`;
  const send = () => fetch('/admin/v1' + path, { headers: { 'X-CSRF-Token': csrf }, credentials: 'same-origin', cache: 'no-store' });
  let res = await send();
  if (res.status === 403 && await signedInAgain()) res = await send();
  if (res.status === 401) {
    csrf = '';
    onSignedOut();
  }
  if (!res.ok) throw await errorOf(res);
  const live = res.headers.get('Decoy-Live') || '';
  if (headOnly) {
    await res.body.cancel();
    return { text: null, live };
  }
  return { text: await res.text(), live };
}

/**
 * listMocks returns every mock the filter names ({workspace_id,
 * project_id, q}, empty values left out), following the pages.
 */
export function listMocks(filter = {}) {
  const q = Object.entries(filter).filter(([, v]) => v).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return listAll('/mocks' + (q ? '?' + q : ''), 'mocks');
}

/**
 * anonymous calls an admin API route that needs no sign-in (an
 * invitation's), without the session cookie: the secret in the path is the
 * only credential.
 */
export async function anonymous(method, path, body) {
  const headers = body === undefined ? {} : { 'Content-Type': 'application/json' };
  const res = await fetch('/admin/v1' + path, {
    method, headers, credentials: 'omit', cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw await errorOf(res);
  return res.status === 204 ? null : res.json();
}

/**
 * listAll returns every item of a paged admin API listing, whose answer
 * holds them under field, following next_cursor. An answer that is a bare
 * array is all there is.
 */
export async function listAll(path, field) {
  const all = [];
  let cursor = '';
  const sep = path.includes('?') ? '&' : '?';
  for (;;) {
    const page = await admin('GET', `${path}${sep}limit=1000${cursor ? '&cursor=' + encodeURIComponent(cursor) : ''}`);
    if (Array.isArray(page)) return page;
    all.push(...(page[field] || []));
    if (!page.next_cursor) return all;
    cursor = page.next_cursor;
  }
}

/**
 * generate runs a template on the server without storing anything, and
 * returns its output (formatted) and the seed it ran with (seed, when
 * given, chooses it).
 */
export async function generate(template, schema, seed) {
  const res = await fetch('/admin/v1/generate' + (seed ? `?seed=${encodeURIComponent(seed)}` : ''), {
    method: 'POST',
    headers: { 'X-CSRF-Token': csrf, 'Content-Type': schema ? 'application/schema+json' : 'application/json' },
    body: template,
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (!res.ok) throw await errorOf(res);
  const text = await res.text();
  let output = text;
  try {
    output = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // shown as it came
  }
  return { output, seed: res.headers.get('Decoy-Seed') || '' };
}

/** revokeAccessToken ends a personal access token (DELETE /auth/token). */
export async function revokeAccessToken(token) {
  const res = await fetch('/admin/v1/auth/token', {
    method: 'DELETE', credentials: 'omit', cache: 'no-store', headers: { Authorization: `Bearer ${token}` },
  });
  if (!res.ok) throw await errorOf(res);
}

/**
 * template returns a mock's template: its text, whether it is a JSON
 * Schema, and its mode (once or always).
 */
export async function template(id) {
  const res = await fetch(`/admin/v1/mocks/${encodeURIComponent(id)}/template`, {
    headers: { 'X-CSRF-Token': csrf },
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (res.status === 401) {
    csrf = '';
    onSignedOut();
  }
  if (!res.ok) throw await errorOf(res);
  const type = res.headers.get('Content-Type') || '';
  return {
    text: await res.text(),
    schema: type.split(';')[0].trim() === 'application/schema+json',
    mode: res.headers.get('Decoy-Template-Mode') || 'once',
  };
}

/**
 * upload sends body (a string, Blob or File) to the admin API with
 * XMLHttpRequest, whose upload events fetch does not give, and calls
 * onProgress({loaded, total, rate}) as the bytes leave (rate in bytes a
 * second). The answer is JSON, as admin's.
 */
export async function upload(method, path, body, opts = {}) {
  let res = await send(method, path, body, opts);
  if (res.status === 403 && await signedInAgain()) res = await send(method, path, body, opts);
  if (res.status === 401) {
    csrf = '';
    onSignedOut();
  }
  if (res.status >= 200 && res.status < 300) return res.answer;
  const msg = res.answer && typeof res.answer.error === 'string' ? res.answer.error : `${res.status} ${res.statusText}`;
  throw new ApiError(res.status, msg);
}

// send makes one upload: {status, statusText, answer}.
function send(method, path, body, { contentType, onProgress }) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, '/admin/v1' + path);
    xhr.withCredentials = true;
    xhr.setRequestHeader('X-CSRF-Token', csrf);
    xhr.setRequestHeader('Content-Type', contentType || 'application/json');
    const started = performance.now();
    const total = typeof body === 'string' ? new Blob([body]).size : body.size;
    const report = (loaded) => {
      const s = (performance.now() - started) / 1000;
      if (onProgress) onProgress({ loaded, total, rate: s > 0.2 ? loaded / s : 0 });
    };
    report(0);
    xhr.upload.onprogress = (e) => report(e.loaded);
    xhr.upload.onload = () => report(total);
    xhr.onerror = () => reject(new ApiError(0, 'The upload failed: the server could not be reached.'));
    xhr.onload = () => {
      let answer = null;
      try {
        answer = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        // not JSON: the status says it
      }
      resolve({ status: xhr.status, statusText: xhr.statusText, answer });
    };
    xhr.send(body);
  });
}

/**
 * DEFAULT_MAX_DATA_BYTES is decoy serve's default --max-data-bytes, assumed
 * when the server does not say its own.
 */
export const DEFAULT_MAX_DATA_BYTES = 64 * 1024 * 1024;

let maxData = null;

/**
 * maxDataBytes is the largest document the server accepts: the
 * limits.max_data_bytes of GET /me when the server gives it, else the
 * default of decoy serve.
 */
export function maxDataBytes() {
  if (!maxData) {
    maxData = admin('GET', '/me').then(
      (me) => (me && me.limits && me.limits.max_data_bytes > 0 ? me.limits.max_data_bytes : DEFAULT_MAX_DATA_BYTES),
      () => DEFAULT_MAX_DATA_BYTES,
    );
  }
  return maxData;
}

/**
 * follow reads a live feed of the admin API (Server-Sent Events, through
 * fetch, which sends the CSRF header that EventSource cannot) and calls
 * onOpen() once it is open and onEvent(name, data, id) for each event,
 * until the feed ends (it resolves) or signal aborts it. lastID, when set, is sent as
 * Last-Event-ID: the feed resumes after it.
 */
export async function follow(path, { lastID, signal, onOpen, onEvent }) {
  const headers = { 'X-CSRF-Token': csrf, Accept: 'text/event-stream' };
  if (lastID) headers['Last-Event-ID'] = lastID;
  const res = await fetch('/admin/v1' + path, { headers, credentials: 'same-origin', cache: 'no-store', signal });
  if (res.status === 401) {
    csrf = '';
    onSignedOut();
  }
  if (!res.ok) throw await errorOf(res);
  if (onOpen) onOpen();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message', data = '', id = '';
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue; // a comment (keep-alive), or a bare field
        const field = line.slice(0, colon), v = line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') name = v;
        else if (field === 'data') data += (data ? '\n' : '') + v;
        else if (field === 'id') id = v;
      }
      if (data) onEvent(name, data, id);
    }
  }
}
