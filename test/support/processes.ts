/**
 * Throwaway servers for the fault tests, on loopback and free ports, stopped by their own process id
 * (never by name) even when a test fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';

/** Resolves when `check` returns true, checking every 100 ms; fails after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve().then(check).catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((wait) => setTimeout(wait, 100));
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((answer) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      answer(true);
    });
    socket.once('error', () => answer(false));
  });
}

/** Stops a child process: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopProcess(child: ChildProcess | undefined, graceMs = 5_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A redis-server of its own on `port`, keeping nothing on disk. */
export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  try {
    await waitFor(`redis-server on port ${port}`, () => accepts(port), 10_000);
  } catch (error) {
    await stopProcess(child);
    throw error;
  }
  return child;
}
