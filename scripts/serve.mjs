// Serves the built page (dist/) on http://127.0.0.1:8080 until interrupted, with the CSP header
// and gzip of static-server.mjs.
import { startServer } from './static-server.mjs';

const root = process.argv[2] || 'dist';
const port = Number(process.env.PORT || 8080);
const { url } = await startServer([root], [], port);
console.log(`HAPMoE Planner: ${url}/  (serving ${root}; Ctrl-C to stop)`);
