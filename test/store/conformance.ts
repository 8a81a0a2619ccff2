/**
 * The `Store` conformance suite: one `describe` per capability of `src/store/store.ts`, testing only
 * the interface's documented behaviour, so every driver (SQLite, PostgreSQL) runs it unchanged.
 * Each test writes to fresh namespaces/tenants/key ids, so stores may be shared and need no cleanup.
 * The tests live in `conformance/`, one file per capability group; this entry runs them all.
 */
import { after, describe } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import { beliefsConformance } from './conformance/beliefs.ts';
import { beliefsLookupConformance } from './conformance/beliefs-lookup.ts';
import { checkpointsConformance } from './conformance/checkpoints.ts';
import { eventsConformance } from './conformance/events.ts';
import { exportPurgeConformance } from './conformance/export-purge.ts';
import { factLogConformance } from './conformance/fact-log.ts';
import { leasesConformance } from './conformance/leases.ts';
import { lifecycleConformance } from './conformance/lifecycle.ts';
import { registryKeysConformance } from './conformance/registry-keys.ts';
import { resumeRecordsConformance } from './conformance/resume-records.ts';
import { searchConformance } from './conformance/search.ts';
import { writeFactsConformance } from './conformance/write-facts.ts';

export { changeOf, freshNamespace, freshTenant, heldAll, makeEvent } from './conformance/helpers.ts';

/**
 * Runs the whole conformance suite against stores made by `open`.
 * @param name driver label shown in test names, e.g. `sqlite (:memory:)`
 * @param open makes a ready store; called once for the store the groups share (closed at the end),
 *   and by the lifecycle group for stores of its own
 */
export function storeConformance(name: string, open: () => Promise<Store>): void {
  describe(`Store conformance: ${name}`, () => {
    let opened: Promise<Store> | undefined;
    const shared = (): Promise<Store> => {
      opened ??= open();
      return opened;
    };
    after(async () => {
      if (opened) await (await opened).close();
    });

    eventsConformance(shared);
    searchConformance(shared);
    factLogConformance(shared);
    beliefsConformance(shared);
    beliefsLookupConformance(shared);
    exportPurgeConformance(shared);
    registryKeysConformance(shared);
    writeFactsConformance(shared);
    leasesConformance(shared);
    resumeRecordsConformance(shared);
    checkpointsConformance(shared);
    lifecycleConformance(open);
  });
}
