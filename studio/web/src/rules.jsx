// A route's rules in Decoy Studio (§13.1): the dialog a route's row opens,
// where editors edit the rules (a list of forms, or the JSON of them all;
// what is wrong shows at the field, the server's refusals at the rule it
// names), save them and start their counts again; and where anyone who
// sees the route tries a request on it: the page sends it to the route
// (same origin, no cookie) and shows which rule answered (the server says
// so when asked, in Decoy-Rule), or that the route answered normally, and
// the answer itself. A fault shows as the network error it is.
import { useRef, useState } from 'preact/hooks';
import * as api from './api.js';
import { expand, params } from './paths.js';
import { ANSWERS, FAULTS, headerLines, newRow, refusedRule, ruleLabel, rowOf, rulesOf, summary } from './rules.js';
import { Dialog, ErrorNote } from './ui.jsx';
import './rules.css';

/**
 * RulesDialog shows route's rules; editable lets them be changed. values
 * are example values of the route's parameters, for the try panel.
 * onSaved is told of the route once its rules are saved.
 */
export function RulesDialog({ route, base, mock, values, editable, onClose, onSaved }) {
  const name = `${route.method} ${route.path}`;
  const [saved, setSaved] = useState(route);
  return (
    <Dialog title={`Rules of ${name}`} onClose={onClose} labelledBy="rules-title" wide>
      <p class="hint">
        Rules answer instead of the route, to the requests they match: tried in order after the token, rate limit and
        quota checks, the first whose conditions hold answers. A rule with <em>times</em> holds for that many requests,
        then steps aside. See <a href="https://github.com/decoy-mock/decoy/blob/main/docs/rules.md" target="_blank" rel="noreferrer">Rules and faults</a>.
      </p>
      {editable
        ? <RulesForm route={saved} onSaved={(r) => { setSaved(r); onSaved(r); }} />
        : <RulesList rules={saved.rules || []} />}
      <TryPanel route={saved} base={base} mock={mock} values={values} />
      <div class="actions">
        <button type="button" onClick={onClose}>Close</button>
      </div>
    </Dialog>
  );
}

/** RulesList shows rules as a viewer sees them. */
function RulesList({ rules }) {
  if (rules.length === 0) return <p data-testid="no-rules">No rules: the route always answers normally.</p>;
  return (
    <ol class="rule-summaries" data-testid="rule-summaries">
      {rules.map((r, i) => <li key={i}><strong>{ruleLabel(r, i)}</strong> <span class="mono">{summary(r)}</span></li>)}
    </ol>
  );
}

/** RulesForm edits a route's rules and saves them. */
function RulesForm({ route, onSaved }) {
  const [rows, setRows] = useState(() => (route.rules || []).map(rowOf));
  const [view, setView] = useState('list');
  const [json, setJSON] = useState('');
  const [jsonProblem, setJSONProblem] = useState('');
  const [problems, setProblems] = useState({});
  const [refused, setRefused] = useState(null);
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const form = useRef(null);

  const clear = () => { setRefused(null); setError(null); setNote(''); };
  const setRow = (key, k, v) => setRows(rows.map((r) => (r.key === key ? { ...r, [k]: v } : r)));
  const move = (i, d) => {
    const next = rows.slice();
    [next[i], next[i + d]] = [next[i + d], next[i]];
    setRows(next);
    setProblems({});
    clear();
  };
  const focusInvalid = () => requestAnimationFrame(() => {
    const el = form.current && form.current.querySelector('[aria-invalid="true"]');
    if (el) el.focus();
  });

  // read returns the rules the form holds, or null after showing what is
  // wrong with them.
  const read = () => {
    if (view === 'json') {
      try {
        const parsed = JSON.parse(json);
        if (!Array.isArray(parsed)) throw new Error('the rules are a JSON array: [{…}, {…}]');
        setJSONProblem('');
        return parsed;
      } catch (e) {
        setJSONProblem(`Not an array of rules: ${e.message}`);
        focusInvalid();
        return null;
      }
    }
    const r = rulesOf(rows);
    setProblems(r.problems);
    if (Object.keys(r.problems).length > 0) {
      focusInvalid();
      return null;
    }
    return r.rules;
  };

  const toJSON = () => {
    clear();
    const rules = read();
    if (!rules) return;
    setJSON(JSON.stringify(rules, null, 2));
    setView('json');
  };
  const toList = () => {
    clear();
    const rules = read();
    if (!rules) return;
    setRows(rules.map((r) => rowOf(r || {})));
    setView('list');
  };

  const save = async (e) => {
    e.preventDefault();
    clear();
    const rules = read();
    if (!rules) return;
    setBusy(true);
    try {
      const r = await api.admin('PATCH', `/routes/${route.id}`, { body: JSON.stringify({ rules }) });
      setRows((r.rules || []).map(rowOf));
      if (view === 'json') setJSON(JSON.stringify(r.rules || [], null, 2));
      setNote(`Rules saved (${(r.rules || []).length}). Their counts start again.`);
      onSaved(r);
    } catch (err) {
      const at = refusedRule(err.message);
      if (at && view === 'list' && at.index < rows.length) {
        setRefused(at);
        focusInvalid();
      } else setError(err);
    } finally {
      setBusy(false);
    }
  };

  const reset = async () => {
    clear();
    try {
      await api.admin('POST', `/routes/${route.id}/rules/reset`);
      setNote('Counts started again: each rule with times holds that many times more.');
    } catch (err) {
      setError(err);
    }
  };

  return (
    <form onSubmit={save} class="stack rules-form" ref={form} noValidate>
      <div class="view-switch" role="group" aria-label="Edit the rules as">
        <button type="button" aria-pressed={view === 'list'} onClick={() => view !== 'list' && toList()}>Form</button>
        <button type="button" aria-pressed={view === 'json'} onClick={() => view !== 'json' && toJSON()}>JSON</button>
      </div>
      {view === 'json' ? (
        <div>
          <label for="rules-json">Rules (JSON)</label>
          <textarea id="rules-json" class="mono" rows={14} spellcheck={false} value={json} onInput={(e) => setJSON(e.target.value)}
            aria-invalid={jsonProblem ? 'true' : undefined} aria-describedby={jsonProblem ? 'rules-json-problem' : undefined} />
          {jsonProblem && <p class="field-error" id="rules-json-problem">{jsonProblem}</p>}
        </div>
      ) : (
        <>
          {rows.length === 0 && <p data-testid="no-rules">No rules: the route always answers normally.</p>}
          <ol class="rules-list">
            {rows.map((row, i) => (
              <RuleRow key={row.key} row={row} i={i} last={i === rows.length - 1} problems={problems[i] || {}}
                refused={refused && refused.index === i ? refused.message : ''}
                set={(k, v) => setRow(row.key, k, v)} move={(d) => move(i, d)}
                remove={() => { setRows(rows.filter((r) => r.key !== row.key)); setProblems({}); clear(); }} />
            ))}
          </ol>
          <button type="button" onClick={() => { setRows([...rows, newRow()]); clear(); }}>Add rule</button>
        </>
      )}
      {note && <p class="notice" role="status">{note}</p>}
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" onClick={reset}>Reset counts</button>
        <button type="submit" class="primary" disabled={busy}>Save rules</button>
      </div>
    </form>
  );
}

/** RuleRow is the form of one rule, with its place in the list. */
function RuleRow({ row, i, last, problems, refused, set, move, remove }) {
  const id = (f) => `rule-${row.key}-${f}`;
  // field gives an input the attributes that tie it to its problem.
  const field = (f) => ({
    id: id(f),
    'aria-invalid': problems[f] ? 'true' : undefined,
    'aria-describedby': problems[f] ? id(`${f}-problem`) : undefined,
  });
  const problem = (f) => problems[f] && <p class="field-error" id={id(`${f}-problem`)}>{problems[f]}</p>;
  const n = i + 1;
  return (
    <li class="rule" data-rule={n}>
      <fieldset>
        <legend>Rule {n}{row.name.trim() ? ` (${row.name.trim()})` : ''}</legend>
        {refused && <p class="error" role="alert" data-testid="rule-refused">{refused}</p>}
        <div class="fields">
          <div>
            <label for={id('name')}>Name</label>
            <input {...field('name')} autocomplete="off" placeholder="flaky" value={row.name} onInput={(e) => set('name', e.target.value)} />
          </div>
          <div class="grow2">
            <label for={id('when')}>When</label>
            <input {...field('when')} class="mono" autocomplete="off" spellcheck={false} placeholder="header.x-scenario=slow&query.page=2"
              value={row.when} onInput={(e) => set('when', e.target.value)} aria-describedby={id('when-hint')} />
          </div>
        </div>
        <p class="hint" id={id('when-hint')}>
          Conditions as in filters, over <code>method</code>, <code>path.&lt;param&gt;</code>, <code>query.&lt;name&gt;</code>,{' '}
          <code>header.&lt;name&gt;</code> (lower case) and <code>body.&lt;path&gt;</code>. Empty: every request.
        </p>
        <div class="fields">
          <div>
            <label for={id('status')}>Status</label>
            <input {...field('status')} inputMode="numeric" placeholder="default" value={row.status} onInput={(e) => set('status', e.target.value)} />
            {problem('status')}
          </div>
          <div>
            <label for={id('delay')}>Delay (ms)</label>
            <input {...field('delay')} inputMode="numeric" placeholder="the mock's" value={row.delay} onInput={(e) => set('delay', e.target.value)} />
            {problem('delay')}
          </div>
          <div>
            <label for={id('times')}>Times</label>
            <input {...field('times')} inputMode="numeric" placeholder="every time" value={row.times} onInput={(e) => set('times', e.target.value)} />
            {problem('times')}
          </div>
          <div>
            <label for={id('fault')}>Fault</label>
            <select id={id('fault')} value={row.fault} onChange={(e) => set('fault', e.target.value)}>
              {FAULTS.map((f) => <option key={f.value} value={f.value}>{f.label}</option>)}
            </select>
          </div>
        </div>
        <div>
          <label for={id('headers')}>Headers</label>
          <textarea {...field('headers')} class="mono" rows={2} spellcheck={false} placeholder="Retry-After: 120" value={row.headers}
            onInput={(e) => set('headers', e.target.value)} />
          {problem('headers')}
        </div>
        <div>
          <label for={id('answer')}>Answer</label>
          <select id={id('answer')} value={row.answer} onChange={(e) => set('answer', e.target.value)}>
            {ANSWERS.map((a) => <option key={a.value} value={a.value}>{a.label}</option>)}
          </select>
        </div>
        {row.answer !== 'normal' && (
          <div>
            <label for={id('body')}>{row.answer === 'template' ? 'Template (JSON)' : 'Body (JSON)'}</label>
            <textarea {...field('body')} class="mono" rows={4} spellcheck={false} value={row.body} onInput={(e) => set('body', e.target.value)}
              placeholder={row.answer === 'template' ? '{"id": "{{ request.path.id }}", "name": "{{ name }}"}' : '{"error": "Down for maintenance"}'} />
            {problem('body')}
            {row.answer === 'template' && (
              <p class="hint">Reads the request: <code>{'{{ request.path.id }}'}</code>, <code>{'{{ request.query.page }}'}</code>,{' '}
                <code>{'{{ request.header.x-user }}'}</code>, <code>{'{{ request.body.name }}'}</code>.</p>
            )}
          </div>
        )}
        <div class="rule-buttons">
          <button type="button" disabled={i === 0} onClick={() => move(-1)}>Move<span class="sr-only"> rule {n}</span> up</button>
          <button type="button" disabled={last} onClick={() => move(1)}>Move<span class="sr-only"> rule {n}</span> down</button>
          <button type="button" class="danger" onClick={remove}>Remove<span class="sr-only"> rule {n}</span></button>
        </div>
      </fieldset>
    </li>
  );
}

/**
 * TryPanel sends a request to the route from the page, and shows which
 * rule answered and the answer; the last few stay listed, newest first.
 */
function TryPanel({ route, base, mock, values }) {
  const names = params(route.path);
  const [vals, setVals] = useState(() => ({ ...(values || {}) }));
  const [query, setQuery] = useState('');
  const [headers, setHeaders] = useState('');
  const [body, setBody] = useState(route.method === 'GET' ? '' : '{}');
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  const [results, setResults] = useState([]);
  const sent = useRef(0);

  const path = expand(route.path, vals);
  const q = query.trim().replace(/^\?/, '');
  const url = base + path + (q ? '?' + q : '');

  const send = async (e) => {
    e.preventDefault();
    const h = headerLines(headers);
    setProblem(h.problem);
    if (h.problem) return;
    const hs = new Headers();
    for (const [k, v] of h.headers) hs.append(k, v);
    hs.set('Decoy-Rule', '?'); // asks the answer to say which rule made it
    if (token.trim()) hs.set('decoyauthtoken', token.trim());
    const withBody = route.method !== 'GET' && body.trim() !== '';
    if (withBody && !hs.has('Content-Type')) hs.set('Content-Type', 'application/json');
    const n = ++sent.current;
    const started = performance.now();
    let result;
    setBusy(true);
    try {
      // Same origin, whatever host the base URL names; no cookie.
      const u = new URL(url, location.href);
      const res = await fetch(u.pathname + u.search, { method: route.method, headers: hs, body: withBody ? body : undefined, credentials: 'omit', cache: 'no-store' });
      const text = await res.text();
      let shown = text;
      try {
        if ((res.headers.get('Content-Type') || '').includes('json')) shown = JSON.stringify(JSON.parse(text), null, 2);
      } catch {
        // shown as sent
      }
      const rule = res.headers.get('Decoy-Rule');
      result = { n, status: res.status, statusText: res.statusText, rule: rule === null ? null : decodeURIComponent(rule), body: shown, ms: Math.round(performance.now() - started) };
    } catch (err) {
      result = { n, status: 0, network: true, message: err && err.message ? err.message : String(err), ms: Math.round(performance.now() - started) };
    } finally {
      setBusy(false);
    }
    setResults((rs) => [result, ...rs].slice(0, 5));
  };

  return (
    <section class="try" aria-labelledby="try-title">
      <h3 id="try-title">Try a request</h3>
      <form onSubmit={send} class="stack">
        <div class="fields">
          <div class="narrow">
            <span class="field-label" id="try-method-label">Method</span>
            <output class="mono method" aria-labelledby="try-method-label" data-testid="try-method">{route.method}</output>
          </div>
          {names.map((p) => (
            <div key={p}>
              <label for={`try-param-${p}`}>Parameter <span class="mono">{`{${p}}`}</span></label>
              <input id={`try-param-${p}`} class="mono" autocomplete="off" spellcheck={false} value={vals[p] || ''}
                onInput={(e) => setVals({ ...vals, [p]: e.target.value })} />
            </div>
          ))}
          <div class="grow2">
            <label for="try-query">Query</label>
            <input id="try-query" class="mono" autocomplete="off" spellcheck={false} placeholder="flaky=1&page=2" value={query} onInput={(e) => setQuery(e.target.value)} />
          </div>
        </div>
        <div class="fields">
          <div class="grow2">
            <label for="try-headers">Headers</label>
            <textarea id="try-headers" class="mono" rows={2} spellcheck={false} placeholder="X-Scenario: maintenance" value={headers}
              onInput={(e) => setHeaders(e.target.value)} aria-invalid={problem ? 'true' : undefined} aria-describedby={problem ? 'try-headers-problem' : undefined} />
            {problem && <p class="field-error" id="try-headers-problem">{problem}</p>}
          </div>
          {route.method !== 'GET' && (
            <div class="grow2">
              <label for="try-body">Body</label>
              <textarea id="try-body" class="mono" rows={2} spellcheck={false} value={body} onInput={(e) => setBody(e.target.value)} />
            </div>
          )}
          {mock && mock.private && (
            <div>
              <label for="try-token">Mock token</label>
              <input id="try-token" class="mono" type="password" autocomplete="off" placeholder="dcy_…" value={token} onInput={(e) => setToken(e.target.value)} />
            </div>
          )}
        </div>
        <p class="hint mono try-url" data-testid="try-url">{route.method} {url}</p>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>Send</button>
        </div>
      </form>
      <ol class="try-results" aria-live="polite" aria-label="Answers, newest first" data-testid="try-results">
        {results.map((r) => <TryResult key={r.n} r={r} />)}
      </ol>
    </section>
  );
}

/** TryResult is one answer of the try panel. */
function TryResult({ r }) {
  const by = r.network
    ? 'no answer: the connection was reset, closed or cut (a fault)'
    : r.rule === null
      ? "the route's normal answer"
      : /^\d+$/.test(r.rule) ? `rule ${r.rule}` : `rule “${r.rule}”`;
  return (
    <li data-testid="try-result" data-status={r.status} data-rule={r.rule ?? ''}>
      <p class={`status s${String(r.status)[0]}`}>
        <span class="try-n">#{r.n}</span>{' '}
        <span data-testid="try-status">{r.network ? 'Network error' : `${r.status} ${r.statusText}`}</span>
        <span class="hint"> · <span data-testid="try-rule">{by}</span>{r.ms ? ` · ${r.ms} ms` : ''}</span>
      </p>
      {r.network
        ? <p class="hint">{r.message}</p>
        : <pre class="code body" tabindex="0" aria-label={`Body of answer ${r.n}`}>{r.body}</pre>}
    </li>
  );
}
