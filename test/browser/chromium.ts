/**
 * The Chromium binary the browser tests drive, looked for as test/securityHeaders.test.ts does:
 * CHROMIUM_BIN, else `chromium`, `chromium-browser` or `google-chrome` on the PATH (`.ci/run`
 * installs Debian's `chromium`). Its absolute path, as playwright-core launches it; undefined only
 * when none exists (the tests are then skipped with a message). One that exists but does not start
 * fails the tests when it is launched.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findChromium(): string | undefined {
  const folders = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of [process.env.CHROMIUM_BIN, 'chromium', 'chromium-browser', 'google-chrome'].filter((name): name is string => Boolean(name))) {
    const found = isAbsolute(name) ? [name] : folders.map((folder) => join(folder, name));
    const path = found.find(executable);
    if (path) return path;
  }
  return undefined;
}

/** The switches of a headless Chromium in a container: no sandbox, GPU, QUIC, first-run or background traffic. */
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
