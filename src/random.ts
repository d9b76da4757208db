/**
 * Random bytes from the operating system's generator, drawn 8 KB at a time: each call to
 * `crypto.randomBytes` asks OpenSSL anew, which costs some 6 µs on the build machine (more than the
 * AES-GCM seal it feeds), against a fraction of a microsecond for a draw from the block. Every byte is
 * handed out once, as Node's own `randomUUID` does with its pool.
 */
import { randomBytes, randomFillSync } from 'node:crypto';

const block = Buffer.alloc(8192);
let drawn = block.length;

/** `bytes` random bytes of a buffer of their own. */
export function randomDraw(bytes: number): Buffer {
  if (bytes > block.length / 8) return randomBytes(bytes);
  if (drawn + bytes > block.length) {
    randomFillSync(block);
    drawn = 0;
  }
  const drawnBytes = Buffer.allocUnsafe(bytes);
  block.copy(drawnBytes, 0, drawn, drawn + bytes);
  drawn += bytes;
  return drawnBytes;
}
