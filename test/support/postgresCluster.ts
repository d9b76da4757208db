/**
 * A throwaway PostgreSQL cluster of a test's own (initdb and pg_ctl from the newest
 * /usr/lib/postgresql/N/bin, run as the `postgres` OS user when the tests run as root), on a free
 * loopback port, in a temporary directory removed by `destroy()`.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';

const run = promisify(execFile);

/** The bin directory of the newest installed PostgreSQL server, or undefined when there is none. */
export function postgresBinaries(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((version) => existsSync(join(base, version, 'bin', 'pg_ctl')) && existsSync(join(base, version, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest === undefined ? undefined : join(base, newest, 'bin');
}

export interface Cluster {
  url: string;
  port: number;
  start(): Promise<void>;
  /** `fast` ends every session (their transactions roll back); `immediate` ends the server without a shutdown checkpoint. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  destroy(): Promise<void>;
}

export async function createCluster(bin: string): Promise<Cluster> {
  const asRoot = process.getuid?.() === 0;
  const directory = await mkdtemp(join(tmpdir(), 'teamos-pg-'));
  const data = join(directory, 'data');
  const port = await freePort();
  const pgUser = async (command: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
    await run(file, argv, { timeout: 60_000 });
  };
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    await chown(directory, Number(stdout.trim()), Number(group.trim()));
  }
  let running = false;
  const cluster: Cluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: async () => {
      await pgUser('pg_ctl', [
        '-D', data, '-l', join(directory, 'server.log'), '-w', '-t', '30',
        '-o', `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=40`,
        'start',
      ]);
      running = true;
    },
    stop: async (mode = 'fast') => {
      await pgUser('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
      running = false;
    },
    destroy: async () => {
      if (running) await cluster.stop('immediate').catch(() => undefined);
      await rm(directory, { recursive: true, force: true });
    },
  };
  try {
    await pgUser('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return cluster;
}
