/**
 * @module
 * The PostgreSQL export: events in commit order, paged on the cursor (txid, seq) of the `since`
 * event (migration 003). Ids cannot be the cursor here: they are taken when a batch is planned and
 * batches of several replicas commit out of id order. Called by `PostgresStore.exportEvents`.
 */
import { invalidRequest } from '../../common/errors.ts';
import { type EventRow, rowToEvent } from '../event-rows.ts';
import type { ExportQuery, StoredEvent } from '../fact-store.ts';
import { E, type Queryable, whereTerms } from './queries.ts';

/**
 * One page of an export: events of the scope after `query.since` in commit order (by transaction id,
 * then insertion order), only of transactions older than the oldest one still in flight.
 *
 * Why the bound: a transaction's id is taken at its first insert, but transactions commit in any
 * order, so a row with a lower txid than the cursor could still commit after a page was read; below
 * `pg_snapshot_xmin` of the statement's snapshot every transaction has ended (committed and visible,
 * or rolled back), so no row can ever appear behind the cursor. Events of transactions in flight (or
 * committed after an older one still in flight) come in a later page or export.
 * @throws {TetherError} 400 `invalid_request` naming `since` when no stored event has that id
 *   (never written, or purged since): there is no place in the commit order to go on from
 */
export async function readExportPage(db: Queryable, query: ExportQuery): Promise<StoredEvent[]> {
  const args: unknown[] = [];
  const { where, add } = whereTerms(args);
  where.push('e.txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint');
  if (query.namespace !== undefined) add('e.namespace = ?', query.namespace);
  if (query.tenant !== undefined) add('e.tenant = ?', query.tenant);
  if (query.since !== undefined) {
    const at = await db.query<{ txid: string; seq: string }>('SELECT txid, seq FROM events WHERE id = $1', [
      query.since,
    ]);
    const cursor = at.rows[0];
    if (!cursor) {
      throw invalidRequest('since', `no stored event has the id ${query.since} (purged?): export without since`);
    }
    args.push(cursor.txid, cursor.seq);
    // A row comparison: the (scope, txid, seq) index scans from the cursor on.
    where.push(`(e.txid, e.seq) > ($${args.length - 1}::bigint, $${args.length}::bigint)`);
  }
  args.push(query.limit);
  const res = await db.query<EventRow>(
    `SELECT ${E} FROM events e WHERE ${where.join(' AND ')} ORDER BY e.txid, e.seq LIMIT $${args.length}`,
    args,
  );
  return res.rows.map(rowToEvent);
}
