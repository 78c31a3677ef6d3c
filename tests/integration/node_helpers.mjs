// Helpers shared by the kafkajs test files that start their own broker: the broker process, free
// ports, readiness and polling (never fixed sleeps for a positive condition).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
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

// One broker process in a temporary directory, with a PLAINTEXT listener and `extraListeners`
// (names, e.g. SASL_PLAINTEXT) on free ports; stop() is a clean SIGTERM shutdown.
export async function startBroker(overrides = {}, { extraListeners = [], prefix = 'oxbow-kafkajs-' } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const logPath = path.join(dir, 'broker.log');
  const ports = { PLAINTEXT: await unusedPort() };
  for (const name of extraListeners) ports[name] = await unusedPort();
  const listeners = Object.entries(ports).map(([name, port]) => `${name}://127.0.0.1:${port}`).join(',');
  const settings = {
    listeners,
    'advertised.listeners': listeners,
    'log.dirs': path.join(dir, 'data'),
    'admin.listener': `127.0.0.1:${await unusedPort()}`,
    ...overrides,
  };
  const args = ['broker'];
  for (const [key, value] of Object.entries(settings)) args.push('--override', `${key}=${value}`);
  assert.ok(fs.existsSync(OXBOW_BIN), `broker binary ${OXBOW_BIN} does not exist (set OXBOW_BIN)`);
  const logFd = fs.openSync(logPath, 'a');
  const proc = spawn(OXBOW_BIN, args, { stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  let exit = null;
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => { exit = { code, signal }; resolve(exit); }));
  const logText = () => { try { return fs.readFileSync(logPath, 'utf8'); } catch { return ''; } };
  const logTail = () => logText().split('\n').slice(-40).join('\n') || '(no log)';
  process.on('exit', () => { if (!exit) proc.kill('SIGKILL'); });

  const deadline = Date.now() + 20000;
  for (;;) {
    const open = await Promise.all(Object.values(ports).map(accepting));
    if (open.every(Boolean)) break;
    if (exit) throw new Error(`broker exited during start-up ${JSON.stringify(exit)}\n${logTail()}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`broker not accepting connections on ${Object.values(ports).join(', ')} after 20 s\n${logTail()}`);
    }
    await sleep(50);
  }
  return {
    ports,
    bootstrap: `127.0.0.1:${ports.PLAINTEXT}`,
    listenerBootstrap: (name) => `127.0.0.1:${ports[name]}`,
    logText,
    logTail,
    async stop() {
      if (exit) return exit;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 30000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

// Starts `oxbow registry` on a free port over `broker`'s `_schemas`, its log in a temporary
// directory, and waits until it answers. Returns { url, dir, stop() }.
export async function startRegistry(broker, prefix = 'oxbow-registry-') {
  const port = await unusedPort();
  const url = `http://127.0.0.1:${port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const logFd = fs.openSync(path.join(dir, 'registry.log'), 'a');
  const proc = spawn(OXBOW_BIN, ['registry',
    '--override', `listeners=${url}`,
    '--override', `kafkastore.bootstrap.servers=${broker.bootstrap}`], { stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  process.on('exit', () => proc.kill('SIGKILL'));
  await eventually(async () => (await fetch(`${url}/`)).ok, 30000, 'the registry answering');
  return {
    url,
    dir,
    async stop() {
      proc.kill('SIGTERM');
      await new Promise((resolve) => proc.once('exit', resolve));
    },
  };
}

// `oxbow sql-server` over `broker` on a free loopback port, its log and state in a temporary
// directory; resolves once /info answers. Returns { port, url, logText(), logTail(), stop() }.
export async function startSqlServer(broker, prefix = 'oxbow-sql-server-') {
  const port = await unusedPort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const logPath = path.join(dir, 'sql-server.log');
  const settings = {
    listeners: `http://127.0.0.1:${port}`,
    'bootstrap.servers': broker.bootstrap,
    'ksql.streams.state.dir': path.join(dir, 'state'),
    'ksql.streams.commit.interval.ms': '100',
    'ksql.streams.statestore.cache.max.bytes': '0',
  };
  const args = ['sql-server'];
  for (const [key, value] of Object.entries(settings)) args.push('-o', `${key}=${value}`);
  const logFd = fs.openSync(logPath, 'a');
  const proc = spawn(OXBOW_BIN, args, { stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  let exit = null;
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => { exit = { code, signal }; resolve(exit); }));
  process.on('exit', () => { if (!exit) proc.kill('SIGKILL'); });
  const logText = () => { try { return fs.readFileSync(logPath, 'utf8'); } catch { return ''; } };
  const logTail = () => logText().slice(-3000);
  await eventually(async () => {
    if (exit) throw new Error(`sql-server exited ${JSON.stringify(exit)}\n${logTail()}`);
    return (await fetch(`http://127.0.0.1:${port}/info`)).ok;
  }, 30000, 'the SQL server answering');
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    logText,
    logTail,
    async stop() {
      if (exit) return exit;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 60000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}
