/**
 * A large JSON answer written in full before its first byte is sent (the team snapshot): held in
 * memory up to `SPOOL_MEMORY_BYTES`, beyond that in a temporary file, so that memory stays flat however
 * large the answer, and a `200` is never sent for an answer that could still fail half-way. Sent with
 * its `Content-Length`, gzip-compressed (the `compression` middleware) when the request accepts it;
 * a connection cut while it is sent leaves the client a body shorter than announced (or a gzip stream
 * without its end), never a shorter valid answer.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream';
import compression from 'compression';
import type { Request, Response } from 'express';

/** How much of the answer is held in memory; past it the answer goes to a temporary file. */
export const SPOOL_MEMORY_BYTES = 1024 * 1024;
/** Text gathered before one write to the file. */
const FILE_WRITE_BYTES = 256 * 1024;

const compress = compression();

export class JsonSpool {
  private chunks: string[] = [];
  private pending = 0;
  private file: { path: string; handle: FileHandle; open: boolean } | undefined;
  /** The answer's bytes so far. */
  bytes = 0;

  /** `tooLarge` is thrown by the write that would take the answer past `maxBytes`. */
  constructor(
    private readonly maxBytes: number,
    private readonly tooLarge: () => Error,
  ) {}

  async write(text: string): Promise<void> {
    const size = Buffer.byteLength(text);
    this.bytes += size;
    if (this.bytes > this.maxBytes) throw this.tooLarge();
    this.chunks.push(text);
    this.pending += size;
    if (this.pending >= (this.file ? FILE_WRITE_BYTES : SPOOL_MEMORY_BYTES)) await this.flush();
  }

  private async flush(): Promise<void> {
    if (!this.file) {
      const path = join(tmpdir(), `team-os-answer-${randomUUID()}.json`);
      this.file = { path, handle: await open(path, 'wx', 0o600), open: true };
    }
    const buffer = Buffer.from(this.chunks.join(''));
    this.chunks = [];
    this.pending = 0;
    await this.file.handle.write(buffer);
  }

  /** The answer is whole: what is still in memory goes to the file, if there is one. */
  async finish(): Promise<void> {
    if (!this.file) return;
    await this.flush();
    this.file.open = false;
    await this.file.handle.close();
  }

  /** Removes the temporary file, if any; the spool is not used again. */
  async discard(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    this.chunks = [];
    if (!file) return;
    if (file.open) await file.handle.close().catch(() => undefined);
    await rm(file.path, { force: true });
  }

  /**
   * Sends the finished answer as a 200 of JSON, compressed when the request accepts gzip, and
   * removes its file once the response ends or the connection closes.
   */
  send(req: Request, res: Response): void {
    res.on('close', () => void this.discard());
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', this.bytes);
    compress(req, res, () => {
      if (!this.file) return void res.end(this.chunks.join(''));
      // An error reading the file destroys the response: the client sees a cut answer, never a short one.
      pipeline(createReadStream(this.file.path), res, () => undefined);
    });
  }
}
