/**
 * @module
 * `--log-format auto|json|pretty` for the server commands (`up`, `memory`, `gateway`): one readable line
 * per entry on a terminal, JSON lines otherwise or when asked. Env `TETHER_LOG_FORMAT` is the default.
 */
import { Option } from 'commander';
import { createLogger, LOG_FORMATS, type LogFormat, type Logger } from '../common/log.ts';

/** The `--log-format` option of a server command. */
export function logFormatOption(): Option {
  return new Option('--log-format <format>', 'log lines: pretty on a terminal, else JSON (TETHER_LOG_FORMAT)')
    .choices([...LOG_FORMATS])
    .default(process.env.TETHER_LOG_FORMAT ?? 'auto');
}

/** The logger of a server command, from its `--log-format`. */
export function commandLogger(name: string, flags: { logFormat?: string }): Logger {
  return createLogger({ name, format: (flags.logFormat ?? 'auto') as LogFormat });
}
