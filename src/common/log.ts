/**
 * @module
 * The JSON logger (pino) every server uses, with secrets redacted once here:
 * keys, tokens, cookies and Authorization headers never reach a log line.
 */
import pino, { type Logger } from 'pino';

/** Paths pino replaces with `[redacted]`. */
export const REDACT_PATHS = Object.freeze([
  'key',
  'token',
  'secret',
  'password',
  '*.key',
  '*.token',
  '*.secret',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
]);

/** Options for `createLogger`. */
export interface LoggerOptions {
  /** pino level. @default 'info' (env `TETHER_LOG_LEVEL`) */
  level?: string;
  /** Service name put on every line. */
  name?: string;
  /** Where lines go. @default stdout */
  destination?: pino.DestinationStream;
}

/** A pino logger with Tether's redaction. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.TETHER_LOG_LEVEL ?? 'info';
  const opts: pino.LoggerOptions = {
    level,
    redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
    base: options.name ? { name: options.name } : {},
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination ? pino(opts, options.destination) : pino(opts);
}

/** A logger that drops everything (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

export type { Logger };
