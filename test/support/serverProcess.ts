/**
 * Real server processes (src/server.ts under `node --import tsx`, one process each, so its id is the
 * server's own) for tests that run several of them on one database: each the leader of a process
 * group of its own, signalled through that group and never by name; and, on Linux, which of them
 * holds a given loopback TCP connection (read from /proc), so a receiver can tell who sent a request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort } from './ports.js';

const root = resolve(import.meta.dirname, '../..');

export interface ServerProcess {
  name: string;
  pid: number;
  url: string;
  child: ChildProcess;
  output(): string;
  /** Resolves when the process has exited, with its code or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
}

/**
 * Starts `src/server.ts` with `env` on a free port and waits until /healthz answers 200 (at most
 * `timeoutMs`, a minute unless given: a start takes 2 to 4 s here, several times that on a busy
 * machine, and the deadline is only there to name a server that never answers). `onSpawn` learns of
 * the process at once: it may work (deliver webhooks) before it answers. `port` is a free one unless
 * given (a process restarted where a load balancer expects it).
 */
export async function startServerProcess(
  name: string,
  env: Record<string, string>,
  options: { timeoutMs?: number; onSpawn?: (server: ServerProcess) => void; port?: number } = {},
): Promise<ServerProcess> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    detached: true,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      REDIS_URL: '',
      RATE_LIMIT_PER_MINUTE: '1000000',
      LOG_LEVEL: 'warn',
      LOG_PRETTY: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const server: ServerProcess = {
    name,
    pid: child.pid!,
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
  };
  options.onSpawn?.(server);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!server.running()) throw new Error(`${name} exited before it answered /healthz:\n${output}`);
    const healthy = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((res) => res.ok, () => false);
    if (healthy) return server;
    if (Date.now() > deadline) {
      signalGroup(server, 'SIGKILL');
      throw new Error(`${name} did not answer /healthz within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((wait) => setTimeout(wait, 100));
  }
}

/** Sends `signal` to the server's whole process group (it leads it); nothing when it is gone. */
export function signalGroup(server: ServerProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-server.pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** SIGTERM to the group, SIGKILL after `graceMs`; resolves with how the process ended. */
export async function stopServerProcess(server: ServerProcess, graceMs = 10_000) {
  if (!server.running()) return server.exited;
  signalGroup(server, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(server, 'SIGKILL'), graceMs);
  try {
    return await server.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** SIGKILL to the group: the process dies at once, in the middle of whatever it was doing. */
export async function killServerProcess(server: ServerProcess) {
  signalGroup(server, 'SIGKILL');
  return server.exited;
}

/**
 * Which of `servers` holds the client end of the loopback TCP connection from `clientPort` to
 * `serverPort` (Linux only: the socket's inode in /proc/net/tcp, then the processes' descriptors).
 * Undefined when none of them does (or the connection is gone). Synchronous on purpose: these are
 * reads of /proc, each far quicker than a trip through the thread pool, and the answer is needed now.
 */
export function ownerOfConnection(clientPort: number, serverPort: number, servers: readonly ServerProcess[]): ServerProcess | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  let inode: string | undefined;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // A closed connection still listed (TIME_WAIT) has inode 0.
      if (fields.length < 10 || fields[9] === '0') continue;
      if (fields[1]!.endsWith(`:${hex(clientPort)}`) && fields[2]!.endsWith(`:${hex(serverPort)}`)) inode = fields[9];
    }
    if (inode) break;
  }
  if (!inode) return undefined;
  const socket = `socket:[${inode}]`;
  for (const server of servers) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${server.pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${server.pid}/fd/${fd}`) === socket) return server;
      } catch {
        // The descriptor closed meanwhile.
      }
    }
  }
  return undefined;
}
