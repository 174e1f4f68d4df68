// Skip links (the page's first tab stops) and the phone's "jump to the plans" link: each moves
// the focus to what it names, without touching the URL, whose hash holds the scenario.
import { fixed } from './format.js';

/** Where each data-skip value leads: the first of its selectors that is shown now. */
const TARGETS = {
  plans: ['#plans tbody tr.selected', '#plans tbody tr', '#summary .diagnosis', '#results'],
  command: ['#megatron button.copy:not(:disabled)', '#megatron pre', '#results'],
  run: ['#plan-btn:not(:disabled)', '#cancel-btn:not(:disabled)', '.run-bar'],
};

const NATIVE_FOCUS = 'a[href], button, input, select, textarea, [tabindex]';

/** The element a data-skip value leads to now, or null when nothing of it is shown. */
export function skipTarget(name) {
  for (const sel of TARGETS[name] || []) {
    const el = document.querySelector(sel);
    if (el && el.getClientRects().length && !el.closest('[hidden]')) return el;
  }
  return null;
}

/** Makes every a[data-skip] inside root move the focus to its target (scrolled into view). */
export function wireSkipLinks(root = document) {
  root.addEventListener('click', (e) => {
    const link = e.target.closest('a[data-skip]');
    if (!link) return;
    e.preventDefault();  // the hash is the scenario: "#plans" would replace it
    const target = skipTarget(link.dataset.skip);
    if (!target) return;
    if (!target.matches(NATIVE_FOCUS)) target.tabIndex = -1;
    target.scrollIntoView({ block: 'center', behavior: 'instant' });
    target.focus({ preventScroll: true });
  });
}

/** The phone's jump link text for a result: the best plan's time, or that nothing fits. */
export function jumpText(result) {
  const best = result?.plans?.[0];
  return best ? `Best plan: ${fixed(best.metrics.iteration_time_s, 3)} s per iteration. Jump to the plans ↓`
    : 'No plan fits. Jump to why ↓';
}
