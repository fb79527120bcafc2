// The JSON editor: CodeMirror 6 with highlighting, folding, bracket
// matching, search, undo, and live validation that names the line and
// column of the first error.
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection } from '@codemirror/view';
import { EditorState, Compartment } from '@codemirror/state';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import { HighlightStyle, foldGutter, foldKeymap, bracketMatching, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { linter, lintGutter } from '@codemirror/lint';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';

/**
 * checkJSON validates text as JSON. It returns null when valid, else
 * {message, from, line, column} of the first error (line and column from 1).
 */
export function checkJSON(text) {
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    const msg = String(e.message || e);
    let pos = text.length;
    const at = /at position (\d+)/.exec(msg);
    const lc = /\(line (\d+) column (\d+)\)/.exec(msg);
    if (at) pos = Number(at[1]);
    else if (lc) pos = offsetOf(text, Number(lc[1]), Number(lc[2]));
    else if (/Unexpected end/.test(msg)) pos = text.length;
    pos = Math.max(0, Math.min(pos, text.length));
    const { line, column } = lineColumn(text, pos);
    const message = msg.replace(/^JSON\.parse: /, '').replace(/ in JSON at position \d+.*$/, '').replace(/ at line \d+ column \d+.*$/, '');
    return { message: text.trim() === '' ? 'Empty document: JSON needs a value, such as [] or {}' : message, from: pos, line, column };
  }
}

function lineColumn(text, pos) {
  let line = 1, start = 0;
  for (let i = 0; i < pos; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: pos - start + 1 };
}

function offsetOf(text, line, column) {
  let pos = 0;
  for (let l = 1; l < line && pos < text.length; pos++) {
    if (text.charCodeAt(pos) === 10) l++;
  }
  return pos + column - 1;
}

/** format returns the JSON text indented by two spaces, or null when invalid. */
export function format(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2) + '\n';
  } catch {
    return null;
  }
}

const jsonLinter = linter((view) => {
  const text = view.state.doc.toString();
  const err = checkJSON(text);
  if (!err) return [];
  const from = Math.min(err.from, text.length);
  return [{ from, to: Math.min(from + 1, text.length), severity: 'error', message: `${err.message} (line ${err.line}, column ${err.column})` }];
}, { delay: 150 });

// The editor's own look, applied through its shadow root (see createEditor).
// Every colour is one of the Studio's custom properties (theme.css), which
// reach into the shadow root, so the editor turns dark with the page.
const theme = EditorView.theme({
  '&': { height: 'var(--editor-height, 420px)', backgroundColor: 'var(--field-bg)', color: 'var(--fg)', fontSize: '13px' },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '-3px' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace' },
  '.cm-content': { caretColor: 'var(--fg)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--fg)' },
  '.cm-gutters': { backgroundColor: 'var(--bg)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
  '.cm-activeLine': { backgroundColor: 'var(--cm-active-line)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--cm-active-gutter)', color: 'var(--fg)' },
  '.cm-selectionBackground, &.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground': { background: 'var(--cm-selection)' },
  '.cm-selectionMatch': { backgroundColor: 'var(--cm-match)' },
  '.cm-foldPlaceholder': { backgroundColor: 'var(--subtle)', border: '1px solid var(--line)', color: 'var(--muted)' },
  '.cm-tooltip': { backgroundColor: 'var(--card)', color: 'var(--fg)', border: '1px solid var(--line)' },
  '.cm-panels': { backgroundColor: 'var(--card)', color: 'var(--fg)' },
  '.cm-panels-top': { borderBottom: '1px solid var(--line)' },
  '.cm-panels-bottom': { borderTop: '1px solid var(--line)' },
  '.cm-textfield': { backgroundColor: 'var(--field-bg)', color: 'var(--fg)', border: '1px solid var(--field-line)' },
  '.cm-button': { backgroundImage: 'none', backgroundColor: 'var(--field-bg)', color: 'var(--fg)', border: '1px solid var(--field-line)' },
});

// The colours of JSON's parts, from the same custom properties; where the
// language has no tag here, text keeps the editor's colour.
const highlight = HighlightStyle.define([
  { tag: tags.propertyName, color: 'var(--cm-property)' },
  { tag: tags.string, color: 'var(--cm-string)' },
  { tag: tags.number, color: 'var(--cm-number)' },
  { tag: [tags.bool, tags.null, tags.atom, tags.keyword], color: 'var(--cm-atom)' },
  { tag: tags.comment, color: 'var(--muted)', fontStyle: 'italic' },
  { tag: tags.invalid, color: 'var(--danger)' },
]);

/**
 * createEditor makes an editor in a shadow root of parent: there,
 * CodeMirror's styles are constructed style sheets, which the Studio's
 * Content-Security-Policy allows, where a <style> element in the document
 * would be refused. onChange gets the text after each
 * change. label names the editor for assistive technology.
 */
export function createEditor(parent, { doc = '', onChange, label, isJSON = true, readOnly = false } = {}) {
  const lang = new Compartment();
  const root = parent.shadowRoot || parent.attachShadow({ mode: 'open' });
  const view = new EditorView({
    parent: root,
    root,
    state: EditorState.create({
      doc,
      extensions: [
        theme,
        lineNumbers(),
        highlightActiveLineGutter(),
        foldGutter(),
        drawSelection(),
        history(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        highlightSelectionMatches(),
        syntaxHighlighting(highlight),
        lang.of(isJSON ? [json(), jsonLinter, lintGutter()] : []),
        // Tab is left to the browser, so that the keyboard can leave the
        // editor: Format indents.
        keymap.of([...defaultKeymap, ...historyKeymap, ...foldKeymap, ...searchKeymap]),
        EditorState.readOnly.of(readOnly),
        EditorView.editable.of(!readOnly),
        // tabindex: the content is in the tab order even when read-only, so
        // that the keyboard scrolls a long document (and axe-core sees the
        // scrolling region reachable).
        EditorView.contentAttributes.of({ 'aria-label': label || 'JSON editor', 'aria-multiline': 'true', tabindex: '0' }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged && onChange) onChange(u.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    get text() {
      return view.state.doc.toString();
    },
    set text(t) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: t } });
    },
    focusAt(pos) {
      view.dispatch({ selection: { anchor: Math.min(pos, view.state.doc.length) }, scrollIntoView: true });
      view.focus();
    },
    destroy() {
      view.destroy();
    },
  };
}
