// Routes as the Studio shows them (§11.2): a path template's parameters,
// whether it is an item route, the action the server gives a route that
// names none, example values for the parameters taken from the mock's own
// records, and the curl command of a route. Pure: no calls, no DOM.

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
export const ACTIONS = ['read', 'create', 'replace', 'update', 'delete'];

// A segment that is a whole parameter: {name}.
const PARAM = /^\{([^{}]+)\}$/;

function segments(path) {
  return String(path || '').split('/').slice(1).filter((s) => s !== '');
}

/** params returns the names of a template's parameters, in order. */
export function params(path) {
  return segments(path).map((s) => PARAM.exec(s)).filter(Boolean).map((m) => m[1]);
}

/** isItem reports whether a template is an item route's: its last segment is a parameter. */
export function isItem(path) {
  const segs = segments(path);
  return segs.length > 0 && PARAM.test(segs[segs.length - 1]);
}

/**
 * defaultAction is the action the server gives a route that names none:
 * POST on a collection route creates; PUT, PATCH and DELETE on an item
 * route replace, update and delete; anything else reads.
 */
export function defaultAction(method, path) {
  const item = isItem(path);
  if (method === 'POST' && !item) return 'create';
  if (method === 'PUT' && item) return 'replace';
  if (method === 'PATCH' && item) return 'update';
  if (method === 'DELETE' && item) return 'delete';
  return 'read';
}

function scalar(v) {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

// reach follows a field path (§1.3: segments split on '.'; on an array a
// segment of digits is an index, any other fans out over the elements)
// from v, and returns the first scalar it reaches (the first scalar
// element of an array reached), or undefined.
function reach(v, segs) {
  if (segs.length === 0) {
    if (scalar(v)) return v;
    if (Array.isArray(v)) return v.find(scalar);
    return undefined;
  }
  const [s, ...rest] = segs;
  if (Array.isArray(v)) {
    if (/^\d+$/.test(s)) return reach(v[Number(s)], rest);
    for (const e of v) {
      const r = reach(e, segs);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  if (v && typeof v === 'object' && Object.hasOwn(v, s)) return reach(v[s], rest);
  return undefined;
}

/** recordsAt returns the array a route works on: the data, or the array at its items path; null when there is none. */
export function recordsAt(data, items) {
  let v = data;
  if (items) {
    for (const s of items.split('.')) {
      if (Array.isArray(v) && /^\d+$/.test(s)) v = v[Number(s)];
      else if (v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, s)) v = v[s];
      else return null;
    }
  }
  return Array.isArray(v) ? v : null;
}

// How many records exampleValues looks at for one whose fields are all there.
const LOOK_AT = 1000;

/**
 * exampleValues finds values for a route's parameters that a request
 * could send: each parameter's bound field (bind, else the field of its
 * own name) in the first record that has all of them, so that the route
 * answers that record. {} when the route has no parameters; null when the
 * data gives none.
 */
export function exampleValues(route, data) {
  const names = params(route.path);
  if (names.length === 0) return {};
  const records = recordsAt(data, route.items);
  if (!records) return null;
  for (const rec of records.slice(0, LOOK_AT)) {
    if (!rec || typeof rec !== 'object' || Array.isArray(rec)) continue;
    const values = {};
    for (const name of names) {
      const field = (route.bind && route.bind[name]) || name;
      const v = reach(rec, field.split('.'));
      const text = typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v);
      if (text === '') break;
      values[name] = text;
    }
    if (Object.keys(values).length === names.length) return values;
  }
  return null;
}

// escapeSegment writes decoded text as one path segment that decodes back
// to it; "." and ".." are escaped too, or a client would resolve them away.
function escapeSegment(s) {
  if (s === '.') return '%2E';
  if (s === '..') return '%2E%2E';
  return encodeURIComponent(s);
}

/**
 * expand writes a template as a request path: literal segments escaped,
 * each parameter replaced by its value in values, or left as {name} when
 * it has none.
 */
export function expand(path, values = {}) {
  const segs = segments(path);
  if (segs.length === 0) return '/';
  return segs.map((s) => {
    const m = PARAM.exec(s);
    if (!m) return '/' + escapeSegment(s);
    return '/' + (values[m[1]] !== undefined ? escapeSegment(values[m[1]]) : s);
  }).join('');
}

function shellQuote(s) {
  return "'" + s.replace(/'/g, "'\\''") + "'";
}

/** TOKEN_VARIABLE is the shell variable a private mock's curl reads its token from. */
export const TOKEN_VARIABLE = 'MOCK_TOKEN';

/**
 * routeCurl is the curl command of a route at baseURL: its method, a JSON
 * body for the actions that take one, the token header of a private mock
 * (from $MOCK_TOKEN: Decoy keeps no token to show), and the URL with
 * values in place of the parameters that have one.
 */
export function routeCurl(baseURL, route, { values = {}, secret = false } = {}) {
  const parts = ['curl'];
  if (route.method !== 'GET') parts.push('-X', route.method);
  if (secret) parts.push('-H', `"decoyauthtoken: $${TOKEN_VARIABLE}"`);
  if (['create', 'replace', 'update'].includes(route.action)) parts.push('-H', shellQuote('Content-Type: application/json'), '-d', shellQuote('{}'));
  parts.push(shellQuote(baseURL + expand(route.path, values)));
  return parts.join(' ');
}
