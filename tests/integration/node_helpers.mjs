// Helpers shared by the kafkajs test files that start their own broker: free ports, readiness and
// polling (never fixed sleeps for a positive condition).
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const OXBOW_BIN = process.env.OXBOW_BIN || path.resolve(here, '../../build/oxbow');
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A port nothing listens on right now (the OS picks it).
export async function unusedPort() {
  const server = net.createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function accepting(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const done = (ok) => { socket.destroy(); resolve(ok); };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function eventually(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) { last = err; }
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${last})` : ''}`);
    await sleep(50);
  }
}
