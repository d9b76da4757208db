/** pino: JSON lines in production; readable lines when LOG_PRETTY=1 (`make run`). Secrets are never logged. */
import { pino, type DestinationStream, type Logger } from 'pino';

/** `destination` replaces standard output (tests read the lines the app writes). */
export function createLogger(level: string, pretty = process.env.LOG_PRETTY === '1', destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: ['req.headers.authorization', '*.apiKey', '*.password', '*.key'], censor: '[redacted]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  };
  if (pretty) return destination ? pino(options, destination) : pino(options);
  // Standard output written asynchronously: a line a request would otherwise cost a blocking write on
  // the request's path; lines written in the same turn of the event loop go out in one write, and
  // pino flushes what is pending when the process exits.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

/** Anything that has the shape of an API key (`ak_` and 43 base64url characters). */
const keyShaped = /ak_[A-Za-z0-9_-]{20,}/g;

/** The text with anything shaped like an API key masked (a key pasted into a path or an error message). */
export const maskKeys = (text: string): string => text.replace(keyShaped, 'ak_[masked]');

/**
 * What the log keeps of an unexpected error. An error from the database (pg or PGlite) keeps only
 * its SQLSTATE, severity and routine: its message, detail, hint, query and parameters quote SQL,
 * table and constraint names and the values of rows — key hashes, password hashes, sealed secrets.
 * Other errors keep their class and message, with anything shaped like an API key masked. The stack
 * keeps only its frames (its first line repeats the message).
 */
export function loggableError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .join('\n');
  const { code, severity, routine } = error as Partial<Record<'code' | 'severity' | 'routine', unknown>>;
  if (typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    return { type: 'DatabaseError', sqlState: code, severity, routine, stack: frames };
  }
  return {
    type: error.constructor.name,
    message: maskKeys(error.message),
    stack: frames,
    ...(error.cause === undefined ? {} : { cause: loggableError(error.cause) }),
  };
}
