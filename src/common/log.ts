/**
 * @module
 * The logger (pino) every server uses, with secrets redacted once here: keys, tokens, cookies and
 * Authorization headers never reach a log line. JSON lines by default; on a terminal (or with
 * `format: 'pretty'`) one readable line each through pino-pretty, pino's own formatter.
 */
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

/** How log lines are written: `json` lines, one `pretty` line each, or `auto` (pretty on a terminal). */
export type LogFormat = 'json' | 'pretty' | 'auto';

/** The log formats a `--log-format` flag accepts. */
export const LOG_FORMATS: readonly LogFormat[] = Object.freeze(['auto', 'json', 'pretty']);

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
  /** @default 'auto' (env `TETHER_LOG_FORMAT`): pretty when stdout is a terminal, else JSON */
  format?: LogFormat;
}

/** Whether `format` writes pretty lines to a stream that is (`tty`) or is not a terminal. */
export function isPretty(format: LogFormat, tty: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && tty);
}

/**
 * One line per entry: time, level, component, message, then the entry's other fields inline.
 * Synchronous, like pino's own stdout destination, so a banner written after a log call follows it.
 */
export function prettyStream(destination: NodeJS.WritableStream = process.stdout, colorize = false) {
  return pretty({
    destination,
    sync: true,
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,name,component',
    messageFormat: '{if component}[{component}] {end}{msg}',
  });
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
  const format = options.format ?? (process.env.TETHER_LOG_FORMAT as LogFormat | undefined) ?? 'auto';
  if (!LOG_FORMATS.includes(format)) {
    throw new Error(`log format must be one of ${LOG_FORMATS.join(', ')}: got '${format}'`);
  }
  if (options.destination) {
    return pino(
      opts,
      format === 'pretty' ? prettyStream(options.destination as NodeJS.WritableStream) : options.destination,
    );
  }
  const tty = process.stdout.isTTY === true;
  return isPretty(format, tty) ? pino(opts, prettyStream(process.stdout, tty)) : pino(opts);
}

/** A logger that drops everything (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

export type { Logger };
