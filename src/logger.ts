/** pino: JSON lines in production; readable lines when LOG_PRETTY=1 (`make run`). Secrets are never logged. */
import { pino, type Logger } from 'pino';

export function createLogger(level: string, pretty = process.env.LOG_PRETTY === '1'): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', '*.apiKey', '*.password', '*.key'], censor: '[redacted]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  });
}
