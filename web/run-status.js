// Run controls: Plan/Cancel buttons, progress bar and status text. The current state is also
// published as document.body.dataset.state ('loading' | 'idle' | 'running'), and the number of
// finished runs as document.body.dataset.runs, for tests and automation.
import { int } from './format.js';

/** els: {plan, cancel, progress, status}. */
export function createRunStatus(els) {
  let started = 0;
  let timer = 0;
  let evaluated = 0;

  function text() {
    const secs = ((performance.now() - started) / 1000).toFixed(1);
    return evaluated > 0 ? `${int(evaluated)} candidates evaluated · ${secs} s` : `${els.phase} · ${secs} s`;
  }

  return {
    /** Enters the running state with a phase label ("Checking inputs…", "Searching…"). */
    running(phase) {
      if (document.body.dataset.state !== 'running') {
        started = performance.now();
        evaluated = 0;
        els.progress.removeAttribute('value'); // indeterminate until the first report
        clearInterval(timer);
        timer = setInterval(() => { els.status.textContent = text(); }, 200);
      }
      els.phase = phase;
      document.body.dataset.state = 'running';
      els.plan.disabled = true;
      els.cancel.disabled = false;
      els.progress.hidden = false;
      els.status.textContent = text();
    },
    /** Progress report from the search: fraction 0..1, candidates evaluated so far. */
    progress(fraction, count) {
      evaluated = count || evaluated;
      els.progress.value = Math.max(0, Math.min(1, fraction || 0));
      els.status.textContent = text();
    },
    /** Back to idle, with a final status line. */
    idle(message = '') {
      clearInterval(timer);
      document.body.dataset.state = 'idle';
      document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
      els.plan.disabled = false;
      els.cancel.disabled = true;
      els.progress.hidden = true;
      els.status.textContent = message;
    },
  };
}
