import { once, EventEmitter } from 'node:events';
import { Writable } from 'node:stream';

/** A pino destination that keeps every line, parsed, and lets a test wait for the one it expects. */
export function capturedLog() {
  const lines: Record<string, unknown>[] = [];
  const written = new EventEmitter();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      written.emit('lines');
      done();
    },
  });
  /** The first line that `matches`, once it is written (a request's line comes when its answer has been sent, maybe after the client read it). */
  async function lineWhere(matches: (line: Record<string, unknown>) => boolean) {
    for (;;) {
      const line = lines.find(matches);
      if (line) return line;
      await once(written, 'lines');
    }
  }
  return { lines, sink, lineWhere };
}
