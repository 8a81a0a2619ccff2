/**
 * @module
 * Leases and resume records of the PostgreSQL store (schema 002). Acquire, renew and release are
 * single statements (the row lock of `ON CONFLICT DO UPDATE` / `UPDATE` makes them atomic across
 * replicas; epochs come from one sequence). A fenced write is one transaction that locks the lease
 * row (`FOR UPDATE`), checks the epoch and writes, so an acquire by another replica waits for it and
 * nothing from a stale epoch is stored. Used by `PostgresStore`, which delegates to it.
 */
import type pg from 'pg';
import type { CheckpointKey, CheckpointQuery, CheckpointRecord, CheckpointWriteRecord } from '../checkpoint-types.ts';
import { namespacesOfWrite, RESUME_TABLES } from '../resume-namespaces.ts';
import {
  type LeaseRow,
  leaseFromRow,
  milestoneFromRow,
  type OutputRow,
  outputFromRow,
  pointerArgs,
  pointerFromRow,
  stateFields,
  turnFromRow,
  workingStateFromRow,
} from '../resume-rows.ts';
import type {
  Fence,
  Fenced,
  LeaseAcquire,
  LeaseRecord,
  MilestoneRecord,
  OutputInfo,
  OutputRecord,
  PointerRecord,
  ResumeExportQuery,
  ResumeRecordLine,
  ResumeWrite,
  ResumeWriteResult,
  TurnQuery,
  TurnRecord,
  WorkingStateRecord,
} from '../resume-types.ts';
import {
  applyCheckpointWrite,
  exportCheckpoints,
  importCheckpointLine,
  readCheckpoints,
  readCheckpointWrites,
} from './checkpoint-tables.ts';
import type { Queryable } from './queries.ts';

/** Rows per page of an export. */
const EXPORT_PAGE = 500;

/** A refusal of a fenced call, carrying the lease as it stands (thrown to roll the transaction back). */
class Refused extends Error {
  constructor(
    readonly reason: 'not_held' | 'lost' | 'conflict',
    readonly lease: LeaseRecord | null,
  ) {
    super(reason);
  }
}

/**
 * The namespace range of an export (bytewise, COLLATE "C"): one namespace (up to itself + U+0001:
 * PostgreSQL text holds no U+0000), a tenant's (`tenant:` up to `tenant;`), or everything.
 */
function scopeOf(q: ResumeExportQuery): { low: string; high: string } {
  if (q.namespace !== undefined) return { low: q.namespace, high: `${q.namespace}\u0001` };
  if (q.tenant !== undefined) return { low: `${q.tenant}:`, high: `${q.tenant};` };
  return { low: '', high: '\u{10FFFF}' };
}

/** Runs `work` in a transaction of its own. */
export type Transact = <T>(work: (c: pg.PoolClient) => Promise<T>) => Promise<T>;

/** Lease and resume-record access over the store's pool. */
export class PostgresResumeTables {
  readonly #db: Queryable;
  readonly #tx: Transact;

  constructor(db: Queryable, tx: Transact) {
    this.#db = db;
    this.#tx = tx;
  }

  async #lease(db: Queryable, namespace: string, forUpdate = false): Promise<LeaseRecord | null> {
    const res = await db.query<LeaseRow>(`SELECT * FROM leases WHERE namespace = $1${forUpdate ? ' FOR UPDATE' : ''}`, [
      namespace,
    ]);
    return res.rows[0] ? leaseFromRow(res.rows[0]) : null;
  }

  async acquire(r: { namespace: string; holder: string; ttlMs: number; now: number }): Promise<LeaseAcquire> {
    for (;;) {
      // One statement: a new namespace inserts; a lapsed lease is taken over; a live one is left as
      // it is (no row returned). Concurrent acquires serialise on the row: one wins per epoch.
      const res = await this.#db.query<LeaseRow>(
        `INSERT INTO leases AS l (namespace, holder, epoch, acquired_at, expires_at, ttl_ms)
         VALUES ($1, $2, nextval('lease_epoch'), $3::bigint, $3::bigint + $4::bigint, $4::bigint)
         ON CONFLICT (namespace) DO UPDATE
           SET holder = EXCLUDED.holder, epoch = EXCLUDED.epoch, acquired_at = EXCLUDED.acquired_at,
               expires_at = EXCLUDED.expires_at, ttl_ms = EXCLUDED.ttl_ms
           WHERE l.expires_at <= $3::bigint
         RETURNING *`,
        [r.namespace, r.holder, r.now, r.ttlMs],
      );
      if (res.rows[0]) return { acquired: true, lease: leaseFromRow(res.rows[0]) };
      const held = await this.#lease(this.#db, r.namespace);
      // Gone (purged) or lapsed between the two statements: try again.
      if (held && held.expiresAt > r.now) return { acquired: false, held };
    }
  }

  async renew(fence: Fence, ttlMs?: number): Promise<Fenced<LeaseRecord>> {
    // Without a TTL, the lease's own (the right-hand ttl_ms is the row's value before the update).
    const ttl = 'COALESCE($4::bigint, ttl_ms)';
    return this.#moveExpiry(fence, `ttl_ms = ${ttl}, expires_at = $3::bigint + ${ttl}`, [ttlMs ?? null]);
  }

  async release(fence: Fence): Promise<Fenced<LeaseRecord>> {
    return this.#moveExpiry(fence, 'expires_at = $3::bigint');
  }

  /** Updates the live lease of `fence.epoch` with `set` ($1..$3: namespace, epoch, now; then `more`). */
  async #moveExpiry(fence: Fence, set: string, more: unknown[] = []): Promise<Fenced<LeaseRecord>> {
    const res = await this.#db.query<LeaseRow>(
      `UPDATE leases SET ${set} WHERE namespace = $1 AND epoch = $2 AND expires_at > $3 RETURNING *`,
      [fence.namespace, fence.epoch, fence.now, ...more],
    );
    if (res.rows[0]) return { ok: true, value: leaseFromRow(res.rows[0]) };
    const lease = await this.#lease(this.#db, fence.namespace);
    return { ok: false, reason: lease ? 'lost' : 'not_held', lease };
  }

  lease(namespace: string): Promise<LeaseRecord | null> {
    return this.#lease(this.#db, namespace);
  }

  async write(fence: Fence, writes: ResumeWrite[]): Promise<Fenced<ResumeWriteResult[]>> {
    for (const w of writes) {
      for (const ns of namespacesOfWrite(w)) {
        if (ns !== fence.namespace) {
          throw new Error(`Cannot write a ${w.kind} of '${ns}' under a fence of '${fence.namespace}'`);
        }
      }
    }
    try {
      const value = await this.#tx(async (c) => {
        // The lease row stays locked until commit: an acquire elsewhere waits, so the check holds.
        const lease = await this.#lease(c, fence.namespace, true);
        if (!lease) throw new Refused('not_held', null);
        if (lease.epoch !== fence.epoch || lease.expiresAt <= fence.now) throw new Refused('lost', lease);
        const out: ResumeWriteResult[] = [];
        for (const w of writes) out.push(await this.#apply(c, fence.namespace, w, lease));
        return out;
      });
      return { ok: true, value };
    } catch (err) {
      if (err instanceof Refused) return { ok: false, reason: err.reason, lease: err.lease };
      throw err;
    }
  }

  async #apply(c: pg.PoolClient, namespace: string, w: ResumeWrite, lease: LeaseRecord): Promise<ResumeWriteResult> {
    switch (w.kind) {
      case 'working_state': {
        const latest = await this.#max(c, 'working_states', 'version', namespace);
        if (latest !== w.state.version - 1) throw new Refused('conflict', lease);
        await this.#insertState(c, w.state);
        return { kind: 'working_state', version: w.state.version };
      }
      case 'milestone': {
        const seq = (await this.#max(c, 'milestones', 'seq', namespace)) + 1;
        await this.#insertMilestone(c, { ...w.milestone, seq });
        return { kind: 'milestone', seq };
      }
      case 'turn': {
        if (w.turn.messageId !== null) {
          const seen = await c.query<{ seq: number }>(
            'SELECT seq FROM turns WHERE namespace = $1 AND message_id = $2',
            [namespace, w.turn.messageId],
          );
          if (seen.rows[0]) return { kind: 'turn', seq: seen.rows[0].seq, duplicate: true };
        }
        if (w.output) await this.#insertOutput(c, w.output);
        const seq = (await this.#max(c, 'turns', 'seq', namespace)) + 1;
        await this.#insertTurn(c, { ...w.turn, seq });
        return { kind: 'turn', seq, duplicate: false };
      }
      case 'output':
        await this.#insertOutput(c, w.output);
        return { kind: 'output', ref: w.output.ref };
      case 'put_pointer':
        await this.#insertPointer(
          c,
          w.pointer,
          'ON CONFLICT (namespace, name) DO UPDATE SET type = EXCLUDED.type, fields = EXCLUDED.fields, note = EXCLUDED.note, updated_at = EXCLUDED.updated_at, epoch = EXCLUDED.epoch',
        );
        return { kind: 'put_pointer' };
      case 'delete_pointer': {
        const res = await c.query('DELETE FROM pointers WHERE namespace = $1 AND name = $2', [namespace, w.name]);
        return { kind: 'delete_pointer', deleted: (res.rowCount ?? 0) > 0 };
      }
      case 'put_checkpoint':
      case 'put_checkpoint_writes':
      case 'delete_thread':
        return applyCheckpointWrite(c, w);
    }
  }

  async #max(db: Queryable, table: string, column: string, namespace: string): Promise<number> {
    const res = await db.query<{ m: number | null }>(`SELECT max(${column}) AS m FROM ${table} WHERE namespace = $1`, [
      namespace,
    ]);
    return res.rows[0]?.m ?? 0;
  }

  async #insertState(db: Queryable, s: WorkingStateRecord, onConflict = ''): Promise<number> {
    const res = await db.query(
      `INSERT INTO working_states (namespace, version, state, updated_at, epoch) VALUES ($1, $2, $3, $4, $5) ${onConflict}`,
      [s.namespace, s.version, JSON.stringify(stateFields(s)), s.updatedAt, s.epoch],
    );
    return res.rowCount ?? 0;
  }

  async #insertMilestone(db: Queryable, m: MilestoneRecord, onConflict = ''): Promise<number> {
    const res = await db.query(
      `INSERT INTO milestones (namespace, seq, name, progress, at, epoch) VALUES ($1, $2, $3, $4, $5, $6) ${onConflict}`,
      [m.namespace, m.seq, m.name, m.progress, m.at, m.epoch],
    );
    return res.rowCount ?? 0;
  }

  async #insertTurn(db: Queryable, t: TurnRecord, onConflict = ''): Promise<number> {
    const res = await db.query(
      `INSERT INTO turns (namespace, seq, role, content, name, message_id, brief, output_ref, at, epoch)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ${onConflict}`,
      [t.namespace, t.seq, t.role, t.content, t.name, t.messageId, t.brief, t.outputRef, t.at, t.epoch],
    );
    return res.rowCount ?? 0;
  }

  async #insertOutput(db: Queryable, o: OutputRecord, onConflict = ''): Promise<number> {
    const res = await db.query(
      `INSERT INTO outputs (namespace, ref, content, tool, summary, bytes, at, epoch)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ${onConflict}`,
      [o.namespace, o.ref, o.content, o.tool, o.summary, o.bytes, o.at, o.epoch],
    );
    return res.rowCount ?? 0;
  }

  async #insertPointer(db: Queryable, p: PointerRecord, onConflict: string): Promise<number> {
    const res = await db.query(
      `INSERT INTO pointers (namespace, name, type, fields, note, updated_at, epoch)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ${onConflict}`,
      pointerArgs(p),
    );
    return res.rowCount ?? 0;
  }

  /** Inserts records keeping their keys; a record whose key (or turn message id) is stored is skipped. */
  async import(records: ResumeRecordLine[]): Promise<number> {
    const skip = 'ON CONFLICT DO NOTHING';
    return this.#tx(async (c) => {
      let inserted = 0;
      for (const line of records) {
        if (line.kind === 'working_state') inserted += await this.#insertState(c, line.record, skip);
        else if (line.kind === 'milestone') inserted += await this.#insertMilestone(c, line.record, skip);
        else if (line.kind === 'turn') inserted += await this.#insertTurn(c, line.record, skip);
        else if (line.kind === 'output') inserted += await this.#insertOutput(c, line.record, skip);
        else if (line.kind === 'pointer') inserted += await this.#insertPointer(c, line.record, skip);
        else inserted += await importCheckpointLine(c, line);
      }
      return inserted;
    });
  }

  async workingState(namespace: string): Promise<WorkingStateRecord | null> {
    const res = await this.#db.query(
      'SELECT * FROM working_states WHERE namespace = $1 ORDER BY version DESC LIMIT 1',
      [namespace],
    );
    return res.rows[0] ? workingStateFromRow(res.rows[0]) : null;
  }

  async workingStateHistory(namespace: string, limit: number, beforeVersion?: number): Promise<WorkingStateRecord[]> {
    const res = await this.#db.query(
      'SELECT * FROM working_states WHERE namespace = $1 AND version < $2 ORDER BY version DESC LIMIT $3',
      [namespace, beforeVersion ?? Number.MAX_SAFE_INTEGER, limit],
    );
    return res.rows.map(workingStateFromRow);
  }

  async milestones(namespace: string, limit: number, beforeSeq?: number): Promise<MilestoneRecord[]> {
    const res = await this.#db.query(
      'SELECT * FROM milestones WHERE namespace = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3',
      [namespace, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit],
    );
    return res.rows.reverse().map(milestoneFromRow);
  }

  async turns(q: TurnQuery): Promise<TurnRecord[]> {
    const res = await this.#db.query(
      'SELECT * FROM turns WHERE namespace = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3',
      [q.namespace, q.beforeSeq ?? Number.MAX_SAFE_INTEGER, q.limit],
    );
    return res.rows.reverse().map(turnFromRow);
  }

  async count(table: 'turns' | 'outputs', namespace: string): Promise<number> {
    const res = await this.#db.query<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE namespace = $1`, [
      namespace,
    ]);
    return res.rows[0]?.n ?? 0;
  }

  async output(namespace: string, ref: string): Promise<OutputRecord | null> {
    const res = await this.#db.query<OutputRow>('SELECT * FROM outputs WHERE namespace = $1 AND ref = $2', [
      namespace,
      ref,
    ]);
    return res.rows[0] ? outputFromRow(res.rows[0]) : null;
  }

  async outputs(namespace: string, limit: number, beforeRef?: string): Promise<OutputInfo[]> {
    // 'out_~' sorts above every ref (keys sort bytewise, COLLATE "C").
    const res = await this.#db.query<Omit<OutputRow, 'content'>>(
      `SELECT namespace, ref, tool, summary, bytes, at, epoch FROM outputs WHERE namespace = $1 AND ref < $2
       ORDER BY ref DESC LIMIT $3`,
      [namespace, beforeRef ?? 'out_~', limit],
    );
    return res.rows.map((r) => {
      const { content: _none, ...info } = outputFromRow({ ...r, content: '' });
      return info;
    });
  }

  async pointers(namespace: string, limit: number, afterName?: string): Promise<PointerRecord[]> {
    const res = await this.#db.query(
      'SELECT * FROM pointers WHERE namespace = $1 AND name > $2 ORDER BY name LIMIT $3',
      [namespace, afterName ?? '', limit],
    );
    return res.rows.map(pointerFromRow);
  }

  checkpoints(query: CheckpointQuery): Promise<CheckpointRecord[]> {
    return readCheckpoints(this.#db, query);
  }

  checkpointWrites(namespace: string, keys: CheckpointKey[]): Promise<CheckpointWriteRecord[]> {
    return readCheckpointWrites(this.#db, namespace, keys);
  }

  /** Erases every resume row of `namespace`; call inside the purge's transaction. */
  async purge(c: pg.PoolClient, namespace: string): Promise<void> {
    for (const table of RESUME_TABLES) await c.query(`DELETE FROM ${table} WHERE namespace = $1`, [namespace]);
  }

  /** Export pages, keyset-paginated on each table's primary key, so writes may run between pages. */
  async *export(query: ResumeExportQuery): AsyncGenerator<ResumeRecordLine> {
    const scope = scopeOf(query);
    const kinds: [ResumeRecordLine['kind'], string, string, (row: never) => ResumeRecordLine['record']][] = [
      ['working_state', 'working_states', 'version', workingStateFromRow],
      ['milestone', 'milestones', 'seq', milestoneFromRow],
      ['turn', 'turns', 'seq', turnFromRow],
      ['output', 'outputs', 'ref', outputFromRow],
      ['pointer', 'pointers', 'name', pointerFromRow],
    ];
    for (const [kind, table, key, fromRow] of kinds) {
      let after: [string, string | number] = ['', key === 'ref' || key === 'name' ? '' : -1];
      for (;;) {
        const res = await this.#db.query(
          `SELECT * FROM ${table} WHERE namespace >= $1 AND namespace < $2 AND (namespace, ${key}) > ($3, $4)
           ORDER BY namespace, ${key} LIMIT ${EXPORT_PAGE}`,
          [scope.low, scope.high, ...after],
        );
        for (const row of res.rows) yield { kind, record: fromRow(row as never) } as ResumeRecordLine;
        if (res.rows.length < EXPORT_PAGE) break;
        const last = res.rows[res.rows.length - 1] as Record<string, string | number>;
        after = [last.namespace as string, last[key] as string | number];
      }
    }
    yield* exportCheckpoints(this.#db, scope);
  }
}
