// "Download SVG" for a chart: the drawn <svg> with the page's chart styles inlined (light
// colours), so the file looks the same outside the page.
import { downloadBlob } from './clipboard.js';

const SVG_STYLE = `text{font:11px system-ui,sans-serif;fill:#1d2330}.tick,.axis{fill:#5d6678}.grid{stroke:#dde1e8}` +
  `.capacity{stroke:#c92a2a;stroke-width:2}.idle{fill:#f5f6f8;stroke:#dde1e8}.op{fill:#fff;font-size:10px}` +
  `.comm{fill:#1d2330;fill-opacity:.35}.end-line{stroke:#1d2330;stroke-width:1.5;stroke-dasharray:4 3}` +
  `.front{fill:none;stroke:#5d6678;stroke-width:1.5;stroke-dasharray:5 3}.in-top{fill:#3b5bdb;stroke:#fff;stroke-width:1.5}` +
  `.off-top{fill:#fff;stroke:#3b5bdb;stroke-width:2.5}.ring{fill:none;stroke:none}.legend-ring,.selected .ring{stroke:#1d2330;stroke-width:2.5}` +
  `.pt-label{font-size:10px;font-weight:600}`;

/** Standalone SVG text for an <svg> element. */
export function standaloneSvg(svg) {
  const copy = svg.cloneNode(true);
  copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  const style = document.createElementNS('http://www.w3.org/2000/svg', 'style');
  style.textContent = SVG_STYLE;
  copy.prepend(style);
  const bg = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
  for (const [k, v] of Object.entries({ x: 0, y: 0, width: '100%', height: '100%', fill: '#ffffff' })) bg.setAttribute(k, v);
  style.after(bg);
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(copy) + '\n';
}

/** Offers the <svg> inside host as filename. Returns false when host holds no chart. */
export function downloadChart(host, filename) {
  const svg = host.querySelector('svg');
  if (!svg) return false;
  downloadBlob(filename, new Blob([standaloneSvg(svg)], { type: 'image/svg+xml' }));
  return true;
}
