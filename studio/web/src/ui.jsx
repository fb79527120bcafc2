// The pieces every page of Decoy Studio shares: errors as the user sees
// them, modal dialogs, copy buttons, and how sizes and times are written.
import { useEffect, useRef, useState } from 'preact/hooks';

/** go navigates to a route of the Studio, as #/… */
export function go(hash) {
  if (location.hash !== hash) location.hash = hash;
}

// Numbers and dates are written in the reader's locale.
const numberFormat = new Intl.NumberFormat(undefined);
const oneDecimal = new Intl.NumberFormat(undefined, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const exactFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });
const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** formatNumber writes n with the reader's digit grouping: 50,000 or 50 000. */
export function formatNumber(n) {
  return typeof n === 'number' ? numberFormat.format(n) : String(n ?? '');
}

export function formatBytes(n) {
  if (n < 1024) return `${numberFormat.format(n)} B`;
  if (n < 1024 * 1024) return `${oneDecimal.format(n / 1024)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${oneDecimal.format(n / 1024 / 1024)} MiB`;
  return `${oneDecimal.format(n / 1024 / 1024 / 1024)} GiB`;
}

/**
 * dataSize is how big a mock's data is, or "generated" for a mock whose
 * template makes its data afresh on every read: what it stores then (an
 * empty array) is no size worth showing.
 */
export function dataSize(m) {
  return m.template_mode === 'always' ? 'generated' : formatBytes(m.size);
}

/** relativeTime says how long ago (or in how long) d is: "3 minutes ago". */
export function relativeTime(d, now = Date.now()) {
  const s = Math.round((d.getTime() - now) / 1000);
  const steps = [[60, 'second'], [60, 'minute'], [24, 'hour'], [30, 'day'], [12, 'month'], [Infinity, 'year']];
  let v = s;
  for (const [size, unit] of steps) {
    if (Math.abs(v) < size) return relativeFormat.format(Math.trunc(v), unit);
    v /= size;
  }
  return '';
}

/**
 * Time shows a moment in the reader's locale, relative when it is within a
 * week ("3 minutes ago"), with the exact time in its title.
 */
export function Time({ value, relative = true }) {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return <span>{String(value ?? '')}</span>;
  const near = Math.abs(Date.now() - d.getTime()) < 7 * 24 * 3600 * 1000;
  return (
    <time dateTime={d.toISOString()} title={exactFormat.format(d)}>
      {relative && near ? relativeTime(d) : dateFormat.format(d)}
    </time>
  );
}

// ---- unsaved work: pages with edits not yet saved say so here, and the
// router and the browser ask before leaving them.

const unsaved = new Set();

/** useUnsaved marks the calling page as holding unsaved edits while dirty. */
export function useUnsaved(key, dirty) {
  useEffect(() => {
    if (dirty) unsaved.add(key);
    else unsaved.delete(key);
    return () => unsaved.delete(key);
  }, [key, dirty]);
}

export const hasUnsaved = () => unsaved.size > 0;
export const forgetUnsaved = () => unsaved.clear();

addEventListener('beforeunload', (e) => {
  if (unsaved.size === 0) return;
  e.preventDefault();
  e.returnValue = '';
});

/** UploadProgress shows an upload's progress: bytes sent, of how many, and the rate. */
export function UploadProgress({ progress, label = 'Uploading' }) {
  if (!progress) return null;
  const { loaded, total, rate } = progress;
  const text = `${formatBytes(loaded)} of ${formatBytes(total)}${rate ? ` · ${formatBytes(rate)}/s` : ''}`;
  return (
    <div class="upload-progress" data-testid="upload-progress">
      <label for="upload-bar">{label}</label>
      <progress id="upload-bar" max={total || 1} value={loaded} aria-valuetext={text} />
      <span class="hint" role="status">{loaded >= total ? `${text} · waiting for the server…` : text}</span>
    </div>
  );
}

/**
 * tooLarge says why a file cannot be uploaded, or '' when it fits the
 * server's limit: checked before a byte is sent.
 */
export function tooLarge(file, max) {
  if (!file || file.size <= max) return '';
  return `${file.name} is ${formatBytes(file.size)}: larger than this server's limit of ${formatBytes(max)} (--max-data-bytes). Nothing was uploaded.`;
}

export function formatTime(s) {
  const d = new Date(s);
  // A time the page cannot read is shown as sent, never a broken page.
  if (Number.isNaN(d.getTime())) return String(s ?? '');
  return d.toISOString().replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');
}

export function ErrorNote({ error }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.status ? <strong>{error.status}: </strong> : null}
      {error.message}
    </p>
  );
}

/**
 * Dialog is a modal <dialog>: focus stays inside, Escape closes it. A
 * oneTime dialog shows a secret once: Escape closes it only after its copy
 * button was used, and otherwise says how to close it. A wide one holds a
 * larger form.
 */
export function Dialog({ title, onClose, children, labelledBy = 'dialog-title', oneTime = false, wide = false }) {
  const ref = useRef(null);
  const [warned, setWarned] = useState(false);
  useEffect(() => {
    const d = ref.current;
    d.showModal();
    let copied = false;
    const clicked = (e) => {
      if (e.target.closest && e.target.closest('.copy button')) copied = true;
    };
    d.addEventListener('click', clicked);
    const cancel = (e) => {
      e.preventDefault();
      if (oneTime && !copied) {
        setWarned(true);
        return;
      }
      onClose();
    };
    // A modal dialog makes the page behind it inert, but Tab may still
    // leave it for the browser's own controls: keep it cycling inside.
    const trap = (e) => {
      if (e.key !== 'Tab') return;
      const els = [...d.querySelectorAll('button, input, select, textarea, a[href], [tabindex]:not([tabindex="-1"])')].filter((el) => !el.disabled);
      if (els.length === 0) return;
      const first = els[0], last = els[els.length - 1];
      if (e.shiftKey && (document.activeElement === first || !d.contains(document.activeElement))) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && (document.activeElement === last || !d.contains(document.activeElement))) {
        e.preventDefault();
        first.focus();
      }
    };
    d.addEventListener('cancel', cancel);
    d.addEventListener('keydown', trap);
    return () => {
      d.removeEventListener('cancel', cancel);
      d.removeEventListener('keydown', trap);
      d.removeEventListener('click', clicked);
      if (d.open) d.close();
    };
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={labelledBy} class={wide ? 'dialog wide' : 'dialog'}>
      <h2 id={labelledBy}>{title}</h2>
      {children}
      {warned && (
        <p class="error" role="alert" data-testid="not-stored">
          It cannot be shown again: copy it first, or confirm that you have stored it.
        </p>
      )}
    </dialog>
  );
}

/**
 * CopyButton copies text to the clipboard. name, when given, is the
 * button's accessible name (it should start with the label), for pages
 * with a copy button per row.
 */
export function CopyButton({ text, label = 'Copy', name }) {
  const [done, setDone] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone('Copied');
    } catch {
      setDone('Select the text and copy it');
    }
    setTimeout(() => setDone(''), 2000);
  };
  return (
    <span class="copy">
      <button type="button" onClick={copy} aria-label={name}>{label}</button>
      <span class="copied" role="status" aria-live="polite">{done}</span>
    </span>
  );
}

export function ConfirmDialog({ title, children, confirm, onConfirm, onClose, danger, cancel = 'Cancel' }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const yes = async () => {
    setBusy(true);
    try {
      await onConfirm();
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <Dialog title={title} onClose={onClose} labelledBy="confirm-title">
      {children}
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" onClick={onClose} autofocus>{cancel}</button>
        <button type="button" class={danger ? 'danger' : 'primary'} onClick={yes} disabled={busy}>{confirm}</button>
      </div>
    </Dialog>
  );
}
