// What the hostile command-line runners share. spawnArgs runs a binary with arguments of which
// some may be raw bytes: an argument given as a Buffer is passed byte for byte through the
// shell's printf (ill-formed UTF-8 cannot travel as a JS string).
import { spawnSync } from 'node:child_process';

export function spawnArgs(bin, args, options = {}) {
  const plain = [];
  const words = args.map((a) => {
    if (!Buffer.isBuffer(a)) {
      plain.push(a);
      return `"\${${plain.length}}"`;
    }
    return `"$(printf '${[...a].map((b) => '\\' + b.toString(8).padStart(3, '0')).join('')}')"`;
  });
  return spawnSync('/bin/sh', ['-c', `exec "$0" ${words.join(' ')}`, bin, ...plain], { maxBuffer: 1 << 28, ...options });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

// Why a run that should refuse its input (exit 2, `needle` in its valid UTF-8 stderr or in its
// stdout) did not, or ''.
export function refusalProblem(r, needle) {
  const stderr = r.stderr.toString('utf8');
  try { utf8.decode(r.stderr); } catch { return 'stderr is not valid UTF-8'; }
  if (r.status !== 2) return `exit ${r.status}, expected 2: ${stderr.slice(0, 300)}`;
  return stderr.includes(needle) || r.stdout.toString('utf8').includes(needle) ? '' : `output lacks "${needle}": ${stderr.slice(0, 300)}`;
}

// Prints the failures and the count of cases, and exits 1 when any failed.
export function finish(total, failures) {
  for (const f of failures) console.log(`FAIL ${f}`);
  console.log(`${total} cases: ${total - failures.length} passed, ${failures.length} failed`);
  process.exit(failures.length ? 1 : 0);
}
