/**
 * @module
 * SIGHUP for servers run by the CLI: read the manifests again and apply them (`Gateway.reload`). A
 * manifest error is logged naming file, document and field, and the services stay as they were.
 * Used by `tether gateway` and `tether up`.
 */
import type { Logger } from '../common/log.ts';
import type { ReloadResult } from '../gateway/reload.ts';

/** Installs a SIGHUP handler that calls `reload` (one at a time: the gateway queues them). */
export function onReloadSignal(log: Logger, reload: () => Promise<ReloadResult>): void {
  process.on('SIGHUP', () => {
    log.info({ signal: 'SIGHUP' }, 'reloading services');
    reload().catch((err: unknown) =>
      log.error({ err: (err as Error).message }, 'reload failed: the services stay as they were'),
    );
  });
}
