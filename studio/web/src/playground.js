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
