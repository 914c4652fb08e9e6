// Start the CongoDB MongoDB wire-protocol test server (in-memory storage).
//
// Usage: node start.mjs PORT
// install.sh copies this file into the install directory, so the import below resolves
// against that directory's node_modules. Prints "ready <port>" once listening and
// stops cleanly on SIGTERM / SIGINT.
import { CongoServer } from './node_modules/@push.rocks/smartmongo/dist_ts/congodb/index.js';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`usage: node start.mjs PORT (got ${JSON.stringify(process.argv[2])})`);
  process.exit(2);
}

const server = new CongoServer({ port, host: '127.0.0.1', storage: 'memory' });
await server.start();
console.log(`ready ${port}`);

let stopping = false;
async function shutdown(signal) {
  if (stopping) return;
  stopping = true;
  try {
    await server.stop();
  } catch (err) {
    console.error(`error while stopping on ${signal}:`, err);
    process.exit(1);
  }
  process.exit(0);
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
