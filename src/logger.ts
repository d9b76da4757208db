/** pino: JSON lines in production; readable lines when LOG_PRETTY=1 (`make run`). Secrets are never logged. */
import { pino, type DestinationStream, type Logger } from 'pino';

/** `destination` replaces standard output (tests read the lines the app writes). */
export function createLogger(level: string, pretty = process.env.LOG_PRETTY === '1', destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: ['req.headers.authorization', '*.apiKey', '*.password', '*.key'], censor: '[redacted]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}
