// A route's rules as the Studio edits them (§13.1): the form of one rule
// (text fields, as typed) and the rule the server takes, read from each
// other; the problems the page sees before sending (a number that is not
// one, a header line without a colon, a body that is not JSON), each
// naming its field; and where in the list a refusal of the server points
// ("Invalid rule 2 (slow): …"). Pure: no calls, no DOM. The server checks
// the rest: the conditions, the template, the limits.

export const FAULTS = [
  { value: '', label: 'None' },
  { value: 'reset', label: 'reset: the connection is reset' },
  { value: 'empty', label: 'empty: closed with no answer' },
  { value: 'malformed', label: 'malformed: an answer cut short' },
];

export const ANSWERS = [
  { value: 'normal', label: "The route's normal body" },
  { value: 'body', label: 'A JSON body' },
  { value: 'template', label: 'A template, run for each request' },
];

let keys = 0;

/** newRow is the form of an empty rule, which always holds and answers normally. */
export function newRow() {
  return { key: ++keys, name: '', when: '', status: '', delay: '', times: '', fault: '', headers: '', answer: 'normal', body: '' };
}

/** rowOf is the form of a rule as the server shows it. */
export function rowOf(r) {
  const answer = r.template != null ? 'template' : r.body != null ? 'body' : 'normal';
  return {
    key: ++keys,
    name: r.name || '',
    when: r.when || '',
    status: r.status == null ? '' : String(r.status),
    delay: r.delay_ms ? String(r.delay_ms) : '',
    times: r.times == null ? '' : String(r.times),
    fault: r.fault || '',
    headers: Object.entries(r.headers || {}).map(([k, v]) => `${k}: ${v}`).join('\n'),
    answer,
    body: answer === 'normal' ? '' : JSON.stringify(answer === 'template' ? r.template : r.body, null, 2),
  };
}

// whole reads a whole number field: '' is none (null), anything else must
// be digits.
function whole(text, what, problems, field) {
  const t = text.trim();
  if (t === '') return null;
  if (!/^\d+$/.test(t)) {
    problems[field] = `${what} must be a whole number`;
    return null;
  }
  return Number(t);
}

/**
 * ruleOf reads a rule's form: {rule, problems}, problems by field (name,
 * when, status, delay, times, headers, body) for what is wrong before the
 * server sees it.
 */
export function ruleOf(row) {
  const problems = {};
  const rule = { name: row.name.trim(), when: row.when.trim() };
  const status = whole(row.status, 'The status', problems, 'status');
  if (status !== null) rule.status = status;
  const delay = whole(row.delay, 'The delay', problems, 'delay');
  if (delay !== null) rule.delay_ms = delay;
  const times = whole(row.times, 'Times', problems, 'times');
  if (times !== null) rule.times = times;
  if (row.fault) rule.fault = row.fault;
  const headers = {};
  row.headers.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const at = line.indexOf(':');
    if (at <= 0) {
      problems.headers = `Line ${i + 1}: write a header as Name: value`;
      return;
    }
    headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  });
  if (Object.keys(headers).length > 0) rule.headers = headers;
  if (row.answer !== 'normal') {
    if (!row.body.trim()) {
      problems.body = row.answer === 'template' ? 'Write the template (JSON)' : 'Write the body (JSON)';
    } else {
      try {
        rule[row.answer] = JSON.parse(row.body);
      } catch (e) {
        problems.body = `Not JSON: ${e.message}`;
      }
    }
  }
  return { rule, problems };
}

/** rulesOf reads every form: {rules, problems}, problems by row index. */
export function rulesOf(rows) {
  const rules = [];
  const problems = {};
  rows.forEach((row, i) => {
    const r = ruleOf(row);
    rules.push(r.rule);
    if (Object.keys(r.problems).length > 0) problems[i] = r.problems;
  });
  return { rules, problems };
}

/**
 * refusedRule finds the rule a refusal of the server names
 * ("Invalid rule 2 (slow): when: …"): its index from 0, and what is wrong
 * with it; null for another refusal.
 */
export function refusedRule(message) {
  const m = /^Invalid rule (\d+)(?: \([^)]*\))?: (.*)$/s.exec(message || '');
  if (!m) return null;
  return { index: Number(m[1]) - 1, message: m[2] };
}

/** ruleLabel names a rule as the server's answers do: its name, else its place from 1. */
export function ruleLabel(rule, i) {
  return rule && rule.name ? rule.name : String(i + 1);
}

/**
 * summary says in a few words what a rule does: "when header.x-mode=slow:
 * 503, 2 times".
 */
export function summary(r) {
  const parts = [];
  if (r.fault) parts.push(`fault ${r.fault}`);
  else {
    if (r.status != null) parts.push(String(r.status));
    if (r.template != null) parts.push('a template');
    else if (r.body != null) parts.push('a body');
    else if (r.status == null) parts.push('the normal answer');
  }
  if (r.delay_ms) parts.push(`after ${r.delay_ms} ms`);
  if (r.times != null) parts.push(r.times === 1 ? 'once' : `${r.times} times`);
  return `${r.when ? `when ${r.when}` : 'always'}: ${parts.join(', ')}`;
}

/**
 * headerLines reads the headers a request of the try panel sends, one
 * "Name: value" a line: {headers, problem}.
 */
export function headerLines(text) {
  const headers = [];
  let problem = '';
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const at = line.indexOf(':');
    if (at <= 0) problem = `Line ${i + 1}: write a header as Name: value`;
    else headers.push([line.slice(0, at).trim(), line.slice(at + 1).trim()]);
  });
  return { headers, problem };
}
