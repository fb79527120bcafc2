// Building read URLs the way the specification wants them: the conditions
// joined by "&", the whole filters value URL-encoded once more.

export const OPERATORS = [
  { value: '$eq', label: 'equals' },
  { value: '$eqi', label: 'equals, any case' },
  { value: '$ne', label: 'not equal' },
  { value: '$nei', label: 'not equal, any case' },
];

// inner escapes, inside one condition, the characters the server splits
// conditions on ("&", "=") and "%", which the server decodes once more.
function inner(s) {
  return s.replace(/[%&=]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** condition writes one filter row: path=value or path[$op]=value. */
export function condition({ path, op, value }) {
  const left = inner(path) + (op && op !== '$eq' ? `[${op}]` : '');
  return `${left}=${inner(value)}`;
}

/**
 * buildQuery returns the query string (without "?") of a playground form:
 * {filters: [{path, op, value}], orderBy, direction, offset, limit}. Rows
 * without a path are left out, as are empty fields.
 */
export function buildQuery({ filters = [], orderBy = '', direction = '', offset = '', limit = '' }) {
  const parts = [];
  const conds = filters.filter((f) => f.path.trim() !== '').map(condition);
  if (conds.length) parts.push('filters=' + encodeURIComponent(conds.join('&')));
  if (orderBy.trim()) parts.push('order_by=' + encodeURIComponent(orderBy.trim()));
  if (direction && orderBy.trim()) parts.push('order_direction=' + encodeURIComponent(direction));
  if (String(offset).trim() !== '') parts.push('offset=' + encodeURIComponent(String(offset).trim()));
  if (String(limit).trim() !== '') parts.push('limit=' + encodeURIComponent(String(limit).trim()));
  return parts.join('&');
}

function shellQuote(s) {
  return "'" + s.replace(/'/g, "'\\''") + "'";
}

/** curl returns the curl command of a read; token is sent as a header. */
export function curl(url, token) {
  const header = token ? ` -H ${shellQuote('decoyauthtoken: ' + token)}` : '';
  return `curl -i${header} ${shellQuote(url)}`;
}

/** fetchSnippet returns JavaScript that makes the same read. */
export function fetchSnippet(url, token) {
  const opts = token ? `, {\n  headers: { decoyauthtoken: ${JSON.stringify(token)} },\n}` : '';
  return `const res = await fetch(${JSON.stringify(url)}${opts});
console.log(res.status, res.headers.get('X-Total-Count'));
const data = await res.json();`;
}

/** The response headers the playground shows, in this order. */
export const SHOWN_HEADERS = [
  'X-Total-Count',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Quota-Limit',
  'X-Quota-Remaining',
  'Retry-After',
  'Content-Type',
  'ETag',
];

// ---- recent and saved queries, per mock, in localStorage. What is kept
// is the form (filters, order, offset, limit), never a token: the token
// field is not part of it, and a filter on a token's name is dropped.

const TOKEN_NAMES = /^(auth_token|decoyauthtoken|serviceauthtoken|authorization)$/i;
const HISTORY_SIZE = 10;

/** keptQuery is the part of a playground form that may be stored. */
export function keptQuery({ filters = [], orderBy = '', direction = 'asc', offset = '', limit = '' }) {
  return {
    filters: filters.filter((f) => !TOKEN_NAMES.test(f.path.trim())).map(({ path, op, value }) => ({ path, op, value })),
    orderBy, direction, offset, limit,
  };
}

function readList(key) {
  try {
    const v = JSON.parse(localStorage.getItem(key) || '[]');
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

function writeList(key, list) {
  try {
    localStorage.setItem(key, JSON.stringify(list));
  } catch {
    // storage full or refused: the lists are a convenience
  }
}

const historyKey = (mockID) => `decoy.playground.history.${mockID}`;
const savedKey = (mockID) => `decoy.playground.saved.${mockID}`;

/** recentQueries lists the mock's last requests, newest first: {query, form, at}. */
export function recentQueries(mockID) {
  return readList(historyKey(mockID));
}

/** rememberQuery adds a sent request to the mock's history. */
export function rememberQuery(mockID, form) {
  const kept = keptQuery(form);
  const query = buildQuery(kept);
  const list = recentQueries(mockID).filter((h) => h.query !== query);
  list.unshift({ query, form: kept, at: new Date().toISOString() });
  writeList(historyKey(mockID), list.slice(0, HISTORY_SIZE));
}

/** savedQueries lists the mock's named queries: {name, query, form}. */
export function savedQueries(mockID) {
  return readList(savedKey(mockID));
}

/** saveQuery stores the form under name, replacing one of the same name. */
export function saveQuery(mockID, name, form) {
  const kept = keptQuery(form);
  const list = savedQueries(mockID).filter((q) => q.name !== name);
  list.push({ name, query: buildQuery(kept), form: kept });
  writeList(savedKey(mockID), list);
}

/** forgetSavedQuery removes the named query. */
export function forgetSavedQuery(mockID, name) {
  writeList(savedKey(mockID), savedQueries(mockID).filter((q) => q.name !== name));
}
