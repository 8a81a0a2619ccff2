/**
 * @module
 * Loads synthetic events into a running memory server over HTTP, as clients would: `POST
 * /v1/memories` batches of 500 statements (the admin key names each batch's namespace), 4 requests
 * in flight. The dataset's few blanket retractions are not statements and are left out. Used by
 * bench:memory, whose memory target (peak RSS) is measured under this load.
 */
import type { StoredEvent } from '../../src/store/store.ts';
import { LoopbackClient } from './http-load.ts';
import type { MemoryDataset } from './memory-data.ts';

/** Options of `loadOverHttp`. */
export interface HttpLoadOptions {
  url: string;
  adminKey: string;
  /** Statements to send. */
  count: number;
  /** @default 500 */
  batch?: number;
  /** @default 4 */
  inFlight?: number;
  /** Called with the statements each answered request carried. */
  onProgress?: (n: number) => void;
}

function statementOf(e: StoredEvent) {
  return {
    subject: e.subject,
    predicate: e.predicate,
    value: e.value,
    observed_at: e.observedAt,
    ...(e.evidence ? { evidence: e.evidence } : {}),
  };
}

/**
 * Sends `count` statements from `dataset`.
 * @returns statements sent and requests that failed
 */
export async function loadOverHttp(
  dataset: MemoryDataset,
  o: HttpLoadOptions,
): Promise<{ sent: number; failed: number }> {
  const batch = o.batch ?? 500;
  let left = o.count;
  let sent = 0;
  let failed = 0;
  /** The next request's body, grouped by namespace (a batch has one namespace). */
  const pending = new Map<string, ReturnType<typeof statementOf>[]>();
  const nextBody = (): { namespace: string; statements: ReturnType<typeof statementOf>[] } | null => {
    for (;;) {
      for (const [namespace, statements] of pending) {
        if (statements.length >= batch || (left === 0 && statements.length > 0)) {
          pending.set(namespace, statements.slice(batch));
          if (statements.length <= batch) pending.delete(namespace);
          return { namespace, statements: statements.slice(0, batch) };
        }
      }
      if (left === 0) return null;
      const n = Math.min(batch, left);
      left -= n;
      for (const e of dataset.next(n)) {
        if (e.retraction) continue;
        const list = pending.get(e.namespace) ?? [];
        list.push(statementOf(e));
        pending.set(e.namespace, list);
      }
    }
  };
  const lane = async () => {
    const client = new LoopbackClient(o.url, { headers: { authorization: `Bearer ${o.adminKey}` } });
    try {
      for (let body = nextBody(); body !== null; body = nextBody()) {
        const res = await client.send({ method: 'POST', path: '/v1/memories', body });
        if (res.status !== 200) {
          failed++;
          if (failed <= 3) process.stderr.write(`load: HTTP ${res.status} ${res.body.slice(0, 200)}\n`);
        }
        sent += body.statements.length;
        o.onProgress?.(body.statements.length);
      }
    } finally {
      client.close();
    }
  };
  await Promise.all(Array.from({ length: o.inFlight ?? 4 }, lane));
  return { sent, failed };
}
