// Copy text and download JSON, with a fallback for contexts without the async clipboard.

/** Copies text; resolves true on success. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

/** Briefly shows "Copied" (or a failure note) on a button. */
export async function copyWithFeedback(button, text) {
  const ok = await copyText(text);
  const label = button.dataset.label || (button.dataset.label = button.textContent);
  button.textContent = ok ? 'Copied ✓' : 'Copy failed';
  setTimeout(() => { button.textContent = label; }, 1500);
  return ok;
}

/** Offers blob as a download named filename. */
export function downloadBlob(filename, blob) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Offers value (any JSON value) as a download named filename. */
export function downloadJson(filename, value) {
  downloadBlob(filename, new Blob([JSON.stringify(value, null, 2) + '\n'], { type: 'application/json' }));
}
