// The pieces every page of Decoy Studio shares: errors as the user sees
// them, modal dialogs, copy buttons, and how sizes and times are written.
import { useEffect, useRef, useState } from 'preact/hooks';

/** go navigates to a route of the Studio, as #/… */
export function go(hash) {
  if (location.hash !== hash) location.hash = hash;
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
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

/** Dialog is a modal <dialog>: focus stays inside, Escape closes it. */
export function Dialog({ title, onClose, children, labelledBy = 'dialog-title' }) {
  const ref = useRef(null);
  useEffect(() => {
    const d = ref.current;
    d.showModal();
    const cancel = (e) => {
      e.preventDefault();
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
      if (d.open) d.close();
    };
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={labelledBy} class="dialog">
      <h2 id={labelledBy}>{title}</h2>
      {children}
    </dialog>
  );
}

export function CopyButton({ text, label = 'Copy' }) {
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
      <button type="button" onClick={copy}>{label}</button>
      <span class="copied" role="status" aria-live="polite">{done}</span>
    </span>
  );
}

export function ConfirmDialog({ title, children, confirm, onConfirm, onClose, danger }) {
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
        <button type="button" onClick={onClose} autofocus>Cancel</button>
        <button type="button" class={danger ? 'danger' : 'primary'} onClick={yes} disabled={busy}>{confirm}</button>
      </div>
    </Dialog>
  );
}
