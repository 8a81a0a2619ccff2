/**
 * @module
 * Checks of command-line flag values (ports, counts, durations) for `tether gateway`, `tether memory` and
 * `tether up`, each called before the command does anything: a bad value is a usage error (`CliError`, exit 2,
 * docs/cli.md's exit-code table), with the flag and the value (cut to 40 characters) named.
 */
import { parseDuration } from '../common/durations.ts';
import { CliError, EXIT } from './api-client.ts';

/** Longest part of a bad value repeated in a message. */
const SHOWN = 40;

/**
 * A port number, 0-65535 (0: any free port).
 * @throws {CliError} exit 2
 */
export function portFlag(flag: string, text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    throw new CliError(`${flag}: must be a port number (0-65535), got '${text.slice(0, SHOWN)}'`, EXIT.usage);
  }
  return Number(text);
}

/**
 * A whole number >= 0.
 * @throws {CliError} exit 2
 */
export function countFlag(flag: string, text: string): number {
  if (!/^\d{1,9}$/.test(text)) {
    throw new CliError(`${flag}: must be an integer >= 0, got '${text.slice(0, SHOWN)}'`, EXIT.usage);
  }
  return Number(text);
}

/**
 * A whole number >= 1.
 * @throws {CliError} exit 2
 */
export function positiveFlag(flag: string, text: string): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) {
    throw new CliError(`${flag}: must be a positive integer, got '${text.slice(0, SHOWN)}'`, EXIT.usage);
  }
  return Number(text);
}

/**
 * A whole percentage, 1-100.
 * @throws {CliError} exit 2
 */
export function percentFlag(flag: string, text: string): number {
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 100) {
    throw new CliError(`${flag}: must be a whole percentage 1-100, got '${text.slice(0, SHOWN)}'`, EXIT.usage);
  }
  return Number(text);
}

/**
 * A duration such as `30s`, `5m`, `1h30m` (common/durations.ts), in ms.
 * @throws {CliError} exit 2
 */
export function durationFlag(flag: string, text: string): number {
  return usage(flag, () => parseDuration(text));
}

/**
 * A duration flag that must be more than zero, in ms.
 * @throws {CliError} exit 2 naming the flag
 */
export function positiveDurationFlag(flag: string, text: string): number {
  const ms = durationFlag(flag, text);
  if (!(ms > 0)) throw new CliError(`${flag}: must be more than 0, got '${text.slice(0, SHOWN)}'`, EXIT.usage);
  return ms;
}

/**
 * Runs a check that throws a plain Error and makes its failure a usage error (exit 2).
 * @param flag put before the message unless the message starts with a flag already
 */
export function usage<T>(flag: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof CliError) throw err;
    const message = (err as Error).message;
    // A message that names its flag already (`--redis-url: …` from the session store's check) is kept.
    throw new CliError(message.startsWith('--') ? message : `${flag}: ${message}`, EXIT.usage);
  }
}
