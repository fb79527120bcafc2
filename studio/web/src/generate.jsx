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

/** GeneratePage is #/generate: a template, its preview, and a new mock from it. */
export function GeneratePage({ go }) {
  const [text, setText] = useState(STARTERS.users);
  const [schema, setSchema] = useState(false);
  const [mode, setMode] = useState('once');
  const [name, setName] = useState('users');
  const [preview, setPreview] = useState({ output: '', seed: '', error: null, busy: false });
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const host = useRef(null);
  const editor = useRef(null);
  // A template of one's own (not a starter as it is) is work to keep.
  useUnsaved('template', !Object.values(STARTERS).includes(text));

  useEffect(() => {
    const ed = createEditor(host.current, { doc: text, onChange: setText, label: 'Template (JSON)', isJSON: true });
    editor.current = ed;
    return () => ed.destroy();
  }, []);

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
      const m = await api.admin('POST', `/mocks?name=${encodeURIComponent(name)}`, { body: '[]' });
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
      <h1>Generate data</h1>
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
              <pre class="preview" data-testid="preview" aria-labelledby="preview-label">{preview.output}</pre>
            )}
          </div>
        </div>
        <div class="fields">
          <div>
            <label for="generate-name">Name</label>
            <input id="generate-name" value={name} maxLength={200} onInput={(e) => setName(e.target.value)} />
          </div>
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
          <button type="submit" class="primary" disabled={busy || !!preview.error}>Create mock</button>
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
