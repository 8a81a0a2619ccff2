/**
 * @module
 * Graceful stop for servers run by the CLI: on SIGTERM or SIGINT run `close` once, exit 0 when it
 * finishes, or exit 1 if it has not finished within the grace period.
 */
import type { Logger } from '../common/log.ts';

/** Grace period for a stop, ms. */
export const SHUTDOWN_GRACE_MS = 10_000;

/** Installs SIGTERM/SIGINT handlers that call `close` once. */
export function onShutdown(log: Logger, close: () => Promise<void>, graceMs = SHUTDOWN_GRACE_MS): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      log.error({ graceMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    close().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // `on`, not `once`: Ctrl-C under `npm start` sends SIGINT twice (the terminal's to the group, then the copy npm
  // forwards to its child); with `once`, a second one handled apart from the first would kill the stop midway.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
