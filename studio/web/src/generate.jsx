// Generated data (§7 of the contract): a template editor beside a live
// preview of what it generates, with the errors inline, starter templates,
// and the choice of generating once or on every read.
import { useEffect, useRef, useState } from 'preact/hooks';
import * as api from './api.js';
import { createEditor } from './editor.js';
import { forgetUnsaved, useUnsaved } from './ui.jsx';

/** STARTERS are templates to begin from. */
export const STARTERS = {
  users: `{
  "$repeat": 10,
  "$item": {
    "id": "{{ index }}",
    "name": "{{ name }}",
    "email": "{{ email }}",
    "age": "{{ number 18 80 }}",
    "city": "{{ city }}",
    "active": "{{ boolean }}",
    "joined": "{{ date \\"2020-01-01\\" \\"2025-12-31\\" }}"
  }
}
`,
  products: `{
  "$repeat": 10,
  "$item": {
    "sku": "SKU-{{ number 100000 999999 }}",
    "name": "{{ productName }}",
    "category": "{{ productCategory }}",
    "price": "{{ price 5 500 }}",
    "color": "{{ color }}",
    "in_stock": "{{ boolean }}"
  }
}
`,
  orders: `{
  "$repeat": [5, 10],
  "$item": {
    "id": "{{ uuid }}",
    "customer": "{{ email }}",
    "status": "{{ choice \\"pending\\" \\"paid\\" \\"shipped\\" \\"delivered\\" }}",
    "placed_at": "{{ datetime \\"2024-01-01\\" \\"2024-12-31\\" }}",
    "lines": {
      "$repeat": [1, 4],
      "$item": { "line": "{{ index }}", "product": "{{ productName }}", "quantity": "{{ number 1 5 }}", "unit_price": "{{ price 2 200 }}" }
    }
  }
}
`,
};

/** previewDelay is how long typing must pause before a preview is asked. */
const previewDelay = 300;

/**
 * GeneratePage is #/generate: a template, its preview, and a new mock from
 * it; or, as #/generate/{id}, mock id's template, edited and saved again.
 */
export function GeneratePage({ go, mockId }) {
  const [text, setText] = useState(STARTERS.users);
  const [schema, setSchema] = useState(false);
  const [mode, setMode] = useState('once');
  const [name, setName] = useState('users');
  const [preview, setPreview] = useState({ output: '', seed: '', error: null, busy: false });
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [mock, setMock] = useState(null);
  const host = useRef(null);
  const editor = useRef(null);
  // A template of one's own (not a starter as it is) is work to keep.
  useUnsaved('template', !Object.values(STARTERS).includes(text));

  useEffect(() => {
    const ed = createEditor(host.current, { doc: text, onChange: setText, label: 'Template (JSON)', isJSON: true });
    editor.current = ed;
    return () => ed.destroy();
  }, []);

  // Editing a mock's template: it replaces the starter once loaded.
  useEffect(() => {
    if (!mockId) return;
    Promise.all([api.admin('GET', `/mocks/${mockId}`), api.template(mockId)]).then(([m, t]) => {
      setMock(m);
      setName(m.name);
      editor.current.text = t.text;
      setText(t.text);
      setSchema(t.schema);
      setMode(t.mode);
    }, setError);
  }, [mockId]);

  // The preview follows the template, debounced; an answer that comes
  // back after a newer request was sent is dropped.
  const latest = useRef(0);
  useEffect(() => {
    const n = ++latest.current;
    setPreview((p) => ({ ...p, busy: true }));
    const timer = setTimeout(async () => {
      try {
        const res = await api.generate(text, schema);
        if (n === latest.current) setPreview({ output: res.output, seed: res.seed, error: null, busy: false });
      } catch (err) {
        if (n === latest.current) setPreview({ output: '', seed: '', error: err, busy: false });
      }
    }, previewDelay);
    return () => clearTimeout(timer);
  }, [text, schema]);

  const start = (key) => {
    editor.current.text = STARTERS[key];
    setText(STARTERS[key]);
    setSchema(false);
    setName(key);
  };

  const create = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const m = mockId ? mock : await api.admin('POST', `/mocks?name=${encodeURIComponent(name)}`, { body: '[]' });
      await api.admin('PUT', `/mocks/${m.id}/template?mode=${mode}`, {
        body: text,
        contentType: schema ? 'application/schema+json' : 'application/json',
      });
      forgetUnsaved();
      go(`#/mocks/${m.id}`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <main id="main">
      <h1>{mockId ? 'Edit the template' : 'Generate data'}</h1>
      {mockId && mock && <p>Of the mock <a href={`#/mocks/${mockId}`}>{mock.name || '(unnamed)'}</a>: saving it makes the template the mock's, in the mode chosen below.</p>}
      <p>
        Write a template: <code>{'{"$repeat": N, "$item": …}'}</code> makes N items, and <code>{'"{{ name }}"'}</code> calls a
        fake-data function (a string that is one call takes its type: <code>{'"{{ number 18 80 }}"'}</code> is a number).
        Or paste a JSON Schema.
      </p>
      <div class="actions" role="group" aria-label="Starter templates">
        <span>Start from:</span>
        {Object.keys(STARTERS).map((k) => (
          <button type="button" key={k} onClick={() => start(k)}>{k}</button>
        ))}
      </div>
      <form onSubmit={create} class="stack">
        <div class="generate-panes">
          <div>
            <p class="field-label" id="template-label">Template</p>
            <div class="editor" ref={host} id="template-editor" />
            <div class="check">
              <input id="template-schema" type="checkbox" checked={schema} onChange={(e) => setSchema(e.target.checked)} />
              <label for="template-schema">This is a JSON Schema</label>
            </div>
          </div>
          <div>
            <p class="field-label" id="preview-label">
              Preview {preview.seed && <span data-testid="preview-seed">(seed {preview.seed})</span>}
              {preview.busy && <span> · updating…</span>}
            </p>
            {preview.error ? (
              <p class="error" role="alert" data-testid="template-error">{preview.error.message}</p>
            ) : (
              <pre class="preview" data-testid="preview" aria-labelledby="preview-label" tabindex="0">{preview.output}</pre>
            )}
          </div>
        </div>
        <div class="fields">
          {!mockId && (
            <div>
              <label for="generate-name">Name</label>
              <input id="generate-name" value={name} maxLength={200} onInput={(e) => setName(e.target.value)} />
            </div>
          )}
          <fieldset>
            <legend>Generate</legend>
            <div class="check">
              <input id="mode-once" type="radio" name="mode" value="once" checked={mode === 'once'} onChange={() => setMode('once')} />
              <label for="mode-once">Once: store the output as the mock's data</label>
            </div>
            <div class="check">
              <input id="mode-always" type="radio" name="mode" value="always" checked={mode === 'always'} onChange={() => setMode('always')} />
              <label for="mode-always">Always: fresh data on every read (Decoy-Seed gives an answer again)</label>
            </div>
          </fieldset>
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !!preview.error || (mockId && !mock)}>{mockId ? 'Save template' : 'Create mock'}</button>
        </div>
        {error && <p class="error" role="alert">{error.status ? <strong>{error.status}: </strong> : null}{error.message}</p>}
      </form>
    </main>
  );
}

/** TemplateBadge says that a mock's data comes from a template, and how. */
export function TemplateBadge({ mode }) {
  const text = mode === 'always' ? 'generated on every read' : 'generated from a template';
  const title = mode === 'always'
    ? 'Every read runs the template afresh; the stored data is not served. Decoy-Seed gives an answer again.'
    : 'The template ran once; its output is the stored data.';
  return <span class="badge" data-testid="template-badge" title={title}>{text}</span>;
}

/**
 * GeneratedData is the Data tab of a mock whose template runs on every
 * read: its stored data is never served, so it shows a sample of what a
 * read gets instead (the mock's template run with a seed, stored nowhere),
 * and where to edit the template.
 */
export function GeneratedData({ mock }) {
  const [sample, setSample] = useState({ output: '', seed: '', error: null, busy: true });
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setSample((s) => ({ ...s, busy: true }));
    api.template(mock.id)
      .then((t) => api.generate(t.text, t.schema))
      .then((res) => live && setSample({ output: res.output, seed: res.seed, error: null, busy: false }),
        (err) => live && setSample({ output: '', seed: '', error: err, busy: false }));
    return () => { live = false; };
  }, [mock.id, mock.version, n]);
  return (
    <section aria-label="Data" data-testid="generated-data">
      <p class="notice">
        This mock's data is generated on every read from its template: each answer is new, and the stored data is not
        served. A read sent with <code>Decoy-Seed: {sample.seed || 'N'}</code> gets the answer generated with that seed again.
      </p>
      <div class="actions">
        <a class="button" href={`#/generate/${mock.id}`}>Edit the template</a>
        <button type="button" disabled={sample.busy} onClick={() => setN(n + 1)}>Another sample</button>
      </div>
      <p class="field-label" id="sample-label">
        Sample {sample.seed && <span data-testid="sample-seed">(seed {sample.seed})</span>}
        {sample.busy && <span> · generating…</span>}
      </p>
      {sample.error ? (
        <p class="error" role="alert">{sample.error.message}</p>
      ) : (
        <pre class="preview" data-testid="sample" aria-labelledby="sample-label">{sample.output}</pre>
      )}
    </section>
  );
}
