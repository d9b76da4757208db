/**
 * A real HAProxy (Debian's package; `.ci/run` installs it) in front of server processes, for the
 * multi-instance test: its configuration written into a temporary directory, run in the foreground
 * (`-db`) as the leader of a process group of its own and stopped through that group, and its
 * runtime API (the admin stats socket) to read each server's health as HAProxy sees it and to take a
 * server out of rotation or put it back.
 *
 * Every response a server gave carries `X-Served-By: <server name>`; HAProxy's own answers (502,
 * 503) carry none. A request with `X-Instance: <server name>` goes to that server while HAProxy
 * counts it up, and is balanced as any other while it is down — a test's way to send a retry to
 * another instance on purpose, never part of a deployment.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { waitFor } from './processes.js';

export const haproxyInstalled = spawnSync('haproxy', ['-v']).status === 0;

export interface Backend {
  name: string;
  port: number;
}

export interface BalancerOptions {
  /** The path of the health check; a server takes traffic only while it answers 200. */
  healthPath: string;
  /** Milliseconds between two checks of a server. */
  checkIntervalMs?: number;
}

export interface Balancer {
  url: string;
  pid: number;
  config: string;
  /** Each server's state as HAProxy's checks see it now: `UP`, `UP 1/2` (failing, still served), `DOWN`, `DOWN 1/2` (recovering, not served), `MAINT`. */
  states(): Promise<Record<string, string>>;
  /** Resolves once every named server is served (`UP…`) or not served (`DOWN…`, `MAINT`), as asked; waits as long as `timeoutMs`. */
  waitUntil(servers: readonly string[], served: boolean, timeoutMs: number): Promise<void>;
  /** Takes a server out of rotation (`maint`) or puts it back (`ready`: served again once its checks pass). */
  setState(server: string, state: 'maint' | 'ready'): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

export const servedState = (state: string | undefined) => state !== undefined && state.startsWith('UP');

/**
 * The configuration: round robin over the servers, each checked with GET `healthPath` every
 * `checkIntervalMs`, out after two failed checks and back after two passed ones. A request that could
 * not connect to its server (the only failure that proves the request was never sent) is retried on
 * another one; any other failure reaches the client, since a change may have been made before its
 * server died. So until HAProxy counts a dead server out, the requests it had in hand fail, and so do
 * those sent to it over a connection it held open.
 */
export function balancerConfig(options: BalancerOptions & { port: number; socket: string; servers: readonly Backend[]; pinning?: boolean }): string {
  const inter = options.checkIntervalMs ?? 200;
  return [
    'global',
    '  maxconn 4096',
    `  stats socket ${options.socket} mode 600 level admin`,
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    // A live stream writes a comment every 10 s, which the two timeouts above outlast; an upgraded connection would need this.
    '  timeout tunnel 1h',
    '  timeout http-keep-alive 10s',
    '  timeout check 2s',
    // Connection failures only: a request that reached a server is never sent twice by the balancer.
    '  retries 3',
    '  option redispatch 1',
    '',
    'frontend api',
    `  bind 127.0.0.1:${options.port}`,
    '  default_backend instances',
    '',
    'backend instances',
    '  balance roundrobin',
    `  option httpchk GET ${options.healthPath}`,
    '  http-check expect status 200',
    `  default-server inter ${inter}ms fall 2 rise 2`,
    '  http-response set-header X-Served-By %s',
    ...(options.pinning ? options.servers.map((server) => `  use-server ${server.name} if { req.hdr(x-instance) -m str ${server.name} }`) : []),
    ...options.servers.map((server) => `  server ${server.name} 127.0.0.1:${server.port} check`),
    '',
  ].join('\n');
}

/** One command on the admin socket; resolves with HAProxy's whole answer. */
function command(socket: string, line: string): Promise<string> {
  return new Promise((answer, fail) => {
    const connection = connect(socket);
    let text = '';
    connection.setEncoding('utf8');
    connection.on('data', (chunk: string) => (text += chunk));
    connection.once('error', fail);
    connection.once('end', () => answer(text));
    connection.write(`${line}\n`);
  });
}

export async function startBalancer(servers: readonly Backend[], options: BalancerOptions): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), 'teamos-haproxy-'));
  const socket = join(dir, 'admin.sock');
  const port = await freePort();
  const config = balancerConfig({ ...options, port, socket, servers, pinning: true });
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const child: ChildProcess = spawn('haproxy', ['-f', file, '-db'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  };

  const states = async () => {
    const csv = await command(socket, 'show stat');
    const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
    const columns = header!.split(',');
    const at = (name: string) => columns.indexOf(name);
    const result: Record<string, string> = {};
    for (const row of rows) {
      const fields = row.split(',');
      if (fields[at('pxname')] === 'instances' && !['BACKEND', 'FRONTEND'].includes(fields[at('svname')]!)) result[fields[at('svname')]!] = fields[at('status')]!;
    }
    return result;
  };

  const balancer: Balancer = {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    config,
    states,
    async waitUntil(names, served, timeoutMs) {
      let last: Record<string, string> = {};
      await waitFor(
        `HAProxy to count ${names.join(', ')} ${served ? 'up' : 'down'}`,
        async () => {
          last = await states();
          return names.every((name) => servedState(last[name]) === served);
        },
        timeoutMs,
      ).catch((error: Error) => {
        throw new Error(`${error.message}; last seen ${JSON.stringify(last)}`);
      });
    },
    async setState(server, state) {
      const answer = await command(socket, `set server instances/${server} state ${state}`);
      if (answer.trim() !== '') throw new Error(`HAProxy refused to set ${server} ${state}: ${answer}`);
    },
    output: () => output,
    async stop() {
      if (running()) {
        signal('SIGTERM');
        const timer = setTimeout(() => signal('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    await waitFor('HAProxy to open its admin socket', async () => !running() || Boolean(await states()), 30_000);
    if (!running()) throw new Error('HAProxy exited');
  } catch (error) {
    await balancer.stop();
    throw new Error(`${(error as Error).message}:\n${output}`);
  }
  return balancer;
}
