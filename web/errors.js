// Error display: a page banner, and per-field messages located by data-field JSON paths
// such as "training.global_batch_size" or "cluster.groups[1].nodes".

/** Shows a message in the banner element; kind is 'error' | 'info'. Empty text hides it. */
export function showBanner(banner, text, kind = 'error') {
  banner.textContent = text || '';
  banner.className = `banner ${kind}`;
  banner.hidden = !text;
}

/** Candidate paths from most to least specific: a.b[1].c -> a.b[1].c, a.b[1], a.b, a. */
export function pathPrefixes(path) {
  const out = [];
  let p = String(path || '');
  while (p) {
    out.push(p);
    const cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
    p = cut > 0 ? p.slice(0, cut) : '';
  }
  return out;
}

/** Finds the input for a JSON path (or its nearest parent path) inside root. */
export function findFieldInput(root, path) {
  for (const p of pathPrefixes(path)) {
    const el = root.querySelector(`[data-field="${CSS.escape(p)}"]`);
    if (el) return el;
  }
  return null;
}

/** Marks the input for `path` invalid with message; returns false if no input matches.
 * focus: also scroll to the input and focus it (not during live re-plans, so typing is not interrupted). */
export function markFieldError(root, path, message, { focus = true } = {}) {
  const input = findFieldInput(root, path);
  if (!input) return false;
  input.classList.add('invalid');
  input.setAttribute('aria-invalid', 'true');
  const note = document.createElement('span');
  note.className = 'field-error';
  note.setAttribute('role', 'alert');
  note.dataset.errorFor = input.dataset.field;
  note.textContent = message;
  input.id ||= `f-${Math.random().toString(36).slice(2)}`;
  note.id = `${input.id}-error`;
  input.setAttribute('aria-describedby', note.id);
  const host = input.closest('.field');
  const row = input.closest('tr');
  if (host) host.append(note);
  else if (row) {
    // Inside a table row: the message gets its own full-width row below.
    const errRow = document.createElement('tr');
    errRow.className = 'error-row';
    const cell = errRow.insertCell();
    cell.colSpan = row.cells.length;
    cell.append(note);
    row.after(errRow);
  } else input.insertAdjacentElement('afterend', note);
  for (let d = input.closest('details'); d; d = d.parentElement?.closest('details')) d.open = true;
  if (focus) {
    input.scrollIntoView({ block: 'center', behavior: 'instant' });
    input.focus({ preventScroll: true });
  }
  return true;
}

/** Removes every field error inside root. */
export function clearFieldErrors(root) {
  root.querySelectorAll('.field-error').forEach((n) => n.remove());
  root.querySelectorAll('tr.error-row').forEach((n) => n.remove());
  root.querySelectorAll('.invalid').forEach((el) => {
    el.classList.remove('invalid');
    el.removeAttribute('aria-invalid');
    el.removeAttribute('aria-describedby');
  });
}
