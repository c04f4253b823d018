import { pino, type Logger } from 'pino';
import type { Config } from '../config.ts';

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    redact: { paths: ['authorization', '*.authorization', 'key', '*.key', 'password', '*.password'], censor: '[redacted]' },
  });
}
