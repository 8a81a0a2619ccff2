/**
 * @module
 * Leases and resume records of the SQLite store (schema 005). Every fenced write is one IMMEDIATE
 * transaction that first checks the lease and then writes, so nothing from a stale epoch is stored.
 * better-sqlite3 is synchronous, so a transaction is never interleaved with another in this process;
 * the data folder's lock keeps other processes out. Used by `SqliteStore`, which delegates to it.
 */
import type Database from 'better-sqlite3';
import type { CheckpointKey, CheckpointQuery, CheckpointRecord, CheckpointWriteRecord } from '../checkpoint-types.ts';
import { namespacesOfWrite } from '../resume-namespaces.ts';
import {
  type LeaseRow,
  leaseFromRow,
  type MilestoneRow,
  milestoneFromRow,
  type OutputRow,
  outputFromRow,
  type PointerRow,
  pointerArgs,
  pointerFromRow,
  stateFields,
  type TurnRow,
  turnFromRow,
  type WorkingStateRow,
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
import { SqliteCheckpointTables } from './checkpoint-tables.ts';

/** Rows per page of an export. */
const EXPORT_PAGE = 500;

/** A refusal of a fenced call, carrying the lease as it stands. */
class Refused extends Error {
  constructor(
    readonly reason: 'not_held' | 'lost' | 'conflict',
    readonly lease: LeaseRecord | null,
  ) {
    super(reason);
  }
}

/** Lease and resume-record access over one better-sqlite3 connection. */
export class SqliteResumeTables {
  readonly #sql: (text: string) => Database.Statement;
  readonly #acquireTx: (r: { namespace: string; holder: string; ttlMs: number; now: number }) => LeaseAcquire;
  readonly #writeTx: (fence: Fence, writes: ResumeWrite[]) => ResumeWriteResult[];
  readonly #leaseTx: (fence: Fence, next: (lease: LeaseRecord) => LeaseRecord) => LeaseRecord;
  readonly #importTx: (records: ResumeRecordLine[]) => number;
  readonly #checkpoints: SqliteCheckpointTables;

  constructor(db: Database.Database, sql: (text: string) => Database.Statement) {
    this.#sql = sql;
    this.#checkpoints = new SqliteCheckpointTables(sql);
    const acquire = db.transaction((r: { namespace: string; holder: string; ttlMs: number; now: number }) => {
      const live = this.#leaseRow(r.namespace);
      if (live && live.expiresAt > r.now) return { acquired: false as const, held: live };
      const epoch = this.#sql('UPDATE lease_epoch SET last = last + 1 WHERE id = 1 RETURNING last')
        .pluck()
        .get() as number;
      const lease = {
        namespace: r.namespace,
        holder: r.holder,
        epoch,
        acquiredAt: r.now,
        expiresAt: r.now + r.ttlMs,
        ttlMs: r.ttlMs,
      };
      this.#sql(
        `INSERT OR REPLACE INTO leases (namespace, holder, epoch, acquired_at, expires_at, ttl_ms)
         VALUES (@namespace, @holder, @epoch, @acquiredAt, @expiresAt, @ttlMs)`,
      ).run(lease);
      return { acquired: true as const, lease };
    });
    // IMMEDIATE: the write lock is taken before the lease is read, so check and write see one state.
    this.#acquireTx = (r) => acquire.immediate(r);
    const lease = db.transaction((fence: Fence, change: (l: LeaseRecord) => LeaseRecord) => {
      const next = change(this.#check(fence));
      this.#sql('UPDATE leases SET expires_at = ?, ttl_ms = ? WHERE namespace = ?').run(
        next.expiresAt,
        next.ttlMs,
        fence.namespace,
      );
      return next;
    });
    this.#leaseTx = (fence, change) => lease.immediate(fence, change);
    const write = db.transaction((fence: Fence, writes: ResumeWrite[]) => {
      this.#check(fence);
      return writes.map((w) => this.#apply(fence.namespace, w));
    });
    this.#writeTx = (fence, writes) => write.immediate(fence, writes);
    const importAll = db.transaction((records: ResumeRecordLine[]) => {
      let inserted = 0;
      for (const r of records) inserted += this.#importOne(r);
      return inserted;
    });
    this.#importTx = (records) => importAll.immediate(records);
  }

  #leaseRow(namespace: string): LeaseRecord | null {
    const row = this.#sql('SELECT * FROM leases WHERE namespace = ?').get(namespace) as LeaseRow | undefined;
    return row ? leaseFromRow(row) : null;
  }

  /** The live lease of `fence.epoch`, or a `Refused` thrown (rolling the transaction back). */
  #check(fence: Fence): LeaseRecord {
    const lease = this.#leaseRow(fence.namespace);
    if (!lease) throw new Refused('not_held', null);
    if (lease.epoch !== fence.epoch || lease.expiresAt <= fence.now) throw new Refused('lost', lease);
    return lease;
  }

  /** Runs a fenced transaction, turning a `Refused` into the refusal answer. */
  #fenced<T>(run: () => T): Fenced<T> {
    try {
      return { ok: true, value: run() };
    } catch (err) {
      if (err instanceof Refused) return { ok: false, reason: err.reason, lease: err.lease };
      throw err;
    }
  }

  acquire(request: { namespace: string; holder: string; ttlMs: number; now: number }): LeaseAcquire {
    return this.#acquireTx(request);
  }

  renew(fence: Fence, ttlMs?: number): Fenced<LeaseRecord> {
    return this.#fenced(() =>
      this.#leaseTx(fence, (held) => {
        const ttl = ttlMs ?? held.ttlMs;
        return { ...held, ttlMs: ttl, expiresAt: fence.now + ttl };
      }),
    );
  }

  release(fence: Fence): Fenced<LeaseRecord> {
    return this.#fenced(() => this.#leaseTx(fence, (held) => ({ ...held, expiresAt: fence.now })));
  }

  lease(namespace: string): LeaseRecord | null {
    return this.#leaseRow(namespace);
  }

  write(fence: Fence, writes: ResumeWrite[]): Fenced<ResumeWriteResult[]> {
    for (const w of writes) {
      for (const ns of namespacesOfWrite(w)) {
        if (ns !== fence.namespace) {
          throw new Error(`Cannot write a ${w.kind} of '${ns}' under a fence of '${fence.namespace}'`);
        }
      }
    }
    return this.#fenced(() => this.#writeTx(fence, writes));
  }

  #apply(namespace: string, w: ResumeWrite): ResumeWriteResult {
    switch (w.kind) {
      case 'working_state': {
        const latest = this.#sql('SELECT max(version) FROM working_states WHERE namespace = ?')
          .pluck()
          .get(namespace) as number | null;
        if ((latest ?? 0) !== w.state.version - 1) throw new Refused('conflict', this.#leaseRow(namespace));
        this.#insertState(w.state);
        return { kind: 'working_state', version: w.state.version };
      }
      case 'milestone': {
        const seq = this.#nextSeq('milestones', namespace);
        this.#insertMilestone({ ...w.milestone, seq });
        return { kind: 'milestone', seq };
      }
      case 'turn': {
        if (w.turn.messageId !== null) {
          const seen = this.#sql('SELECT seq FROM turns WHERE namespace = ? AND message_id = ?')
            .pluck()
            .get(namespace, w.turn.messageId) as number | undefined;
          if (seen !== undefined) return { kind: 'turn', seq: seen, duplicate: true };
        }
        if (w.output) this.#insertOutput(w.output);
        const seq = this.#nextSeq('turns', namespace);
        this.#insertTurn({ ...w.turn, seq });
        return { kind: 'turn', seq, duplicate: false };
      }
      case 'output':
        this.#insertOutput(w.output);
        return { kind: 'output', ref: w.output.ref };
      case 'put_pointer':
        this.#sql(
          `INSERT OR REPLACE INTO pointers (namespace, name, type, fields, note, updated_at, epoch)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(...pointerArgs(w.pointer));
        return { kind: 'put_pointer' };
      case 'delete_pointer': {
        const info = this.#sql('DELETE FROM pointers WHERE namespace = ? AND name = ?').run(namespace, w.name);
        return { kind: 'delete_pointer', deleted: info.changes > 0 };
      }
      case 'put_checkpoint':
      case 'put_checkpoint_writes':
      case 'delete_thread':
        return this.#checkpoints.apply(w);
    }
  }

  #nextSeq(table: 'milestones' | 'turns', namespace: string): number {
    const max = this.#sql(`SELECT max(seq) FROM ${table} WHERE namespace = ?`).pluck().get(namespace) as number | null;
    return (max ?? 0) + 1;
  }

  #insertState(s: WorkingStateRecord, orIgnore = ''): number {
    return this.#sql(
      `INSERT ${orIgnore} INTO working_states (namespace, version, state, updated_at, epoch) VALUES (?, ?, ?, ?, ?)`,
    ).run(s.namespace, s.version, JSON.stringify(stateFields(s)), s.updatedAt, s.epoch).changes;
  }

  #insertMilestone(m: MilestoneRecord, orIgnore = ''): number {
    return this.#sql(
      `INSERT ${orIgnore} INTO milestones (namespace, seq, name, progress, at, epoch) VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(m.namespace, m.seq, m.name, m.progress, m.at, m.epoch).changes;
  }

  #insertTurn(t: TurnRecord, orIgnore = ''): number {
    return this.#sql(
      `INSERT ${orIgnore} INTO turns (namespace, seq, role, content, name, message_id, brief, output_ref, at, epoch)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(t.namespace, t.seq, t.role, t.content, t.name, t.messageId, t.brief, t.outputRef, t.at, t.epoch).changes;
  }

  #insertOutput(o: OutputRecord, orIgnore = ''): number {
    return this.#sql(
      `INSERT ${orIgnore} INTO outputs (namespace, ref, content, tool, summary, bytes, at, epoch)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(o.namespace, o.ref, o.content, o.tool, o.summary, o.bytes, o.at, o.epoch).changes;
  }

  #importOne(line: ResumeRecordLine): number {
    switch (line.kind) {
      case 'working_state':
        return this.#insertState(line.record, 'OR IGNORE');
      case 'milestone':
        return this.#insertMilestone(line.record, 'OR IGNORE');
      case 'turn':
        return this.#insertTurn(line.record, 'OR IGNORE');
      case 'output':
        return this.#insertOutput(line.record, 'OR IGNORE');
      case 'pointer':
        return this.#sql(
          `INSERT OR IGNORE INTO pointers (namespace, name, type, fields, note, updated_at, epoch)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(...pointerArgs(line.record)).changes;
      case 'checkpoint':
      case 'checkpoint_write':
        return this.#checkpoints.importOne(line);
    }
  }

  import(records: ResumeRecordLine[]): number {
    return this.#importTx(records);
  }

  workingState(namespace: string): WorkingStateRecord | null {
    const row = this.#sql('SELECT * FROM working_states WHERE namespace = ? ORDER BY version DESC LIMIT 1').get(
      namespace,
    ) as WorkingStateRow | undefined;
    return row ? workingStateFromRow(row) : null;
  }

  workingStateHistory(namespace: string, limit: number, beforeVersion?: number): WorkingStateRecord[] {
    const rows = this.#sql(
      'SELECT * FROM working_states WHERE namespace = ? AND version < ? ORDER BY version DESC LIMIT ?',
    ).all(namespace, beforeVersion ?? Number.MAX_SAFE_INTEGER, limit) as WorkingStateRow[];
    return rows.map(workingStateFromRow);
  }

  milestones(namespace: string, limit: number, beforeSeq?: number): MilestoneRecord[] {
    const rows = this.#sql('SELECT * FROM milestones WHERE namespace = ? AND seq < ? ORDER BY seq DESC LIMIT ?').all(
      namespace,
      beforeSeq ?? Number.MAX_SAFE_INTEGER,
      limit,
    ) as MilestoneRow[];
    return rows.reverse().map(milestoneFromRow);
  }

  turns(q: TurnQuery): TurnRecord[] {
    const rows = this.#sql('SELECT * FROM turns WHERE namespace = ? AND seq < ? ORDER BY seq DESC LIMIT ?').all(
      q.namespace,
      q.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      q.limit,
    ) as TurnRow[];
    return rows.reverse().map(turnFromRow);
  }

  countTurns(namespace: string): number {
    return this.#sql('SELECT count(*) FROM turns WHERE namespace = ?').pluck().get(namespace) as number;
  }

  output(namespace: string, ref: string): OutputRecord | null {
    const row = this.#sql('SELECT * FROM outputs WHERE namespace = ? AND ref = ?').get(namespace, ref) as
      | OutputRow
      | undefined;
    return row ? outputFromRow(row) : null;
  }

  outputs(namespace: string, limit: number, beforeRef?: string): OutputInfo[] {
    // 'out_~' sorts above every ref (hex digits and letters are below '~').
    const rows = this.#sql(
      `SELECT namespace, ref, tool, summary, bytes, at, epoch FROM outputs WHERE namespace = ? AND ref < ?
       ORDER BY ref DESC LIMIT ?`,
    ).all(namespace, beforeRef ?? 'out_~', limit) as Omit<OutputRow, 'content'>[];
    return rows.map((r) => {
      const { content: _none, ...info } = outputFromRow({ ...r, content: '' });
      return info;
    });
  }

  countOutputs(namespace: string): number {
    return this.#sql('SELECT count(*) FROM outputs WHERE namespace = ?').pluck().get(namespace) as number;
  }

  pointers(namespace: string, limit: number, afterName?: string): PointerRecord[] {
    const rows = this.#sql('SELECT * FROM pointers WHERE namespace = ? AND name > ? ORDER BY name LIMIT ?').all(
      namespace,
      afterName ?? '',
      limit,
    ) as PointerRow[];
    return rows.map(pointerFromRow);
  }

  checkpoints(query: CheckpointQuery): CheckpointRecord[] {
    return this.#checkpoints.checkpoints(query);
  }

  checkpointWrites(namespace: string, keys: CheckpointKey[]): CheckpointWriteRecord[] {
    return this.#checkpoints.checkpointWrites(namespace, keys);
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
      const stmt = this.#sql(
        `SELECT * FROM ${table} WHERE namespace >= ? AND namespace < ? AND (namespace, ${key}) > (?, ?)
         ORDER BY namespace, ${key} LIMIT ${EXPORT_PAGE}`,
      );
      // Numbers sort before text in SQLite, so '' is below every ref/name and -1 below every seq.
      let after: [string, string | number] = ['', key === 'ref' || key === 'name' ? '' : -1];
      for (;;) {
        const rows = stmt.all(scope.low, scope.high, ...after) as Record<string, unknown>[];
        for (const row of rows) yield { kind, record: fromRow(row as never) } as ResumeRecordLine;
        if (rows.length < EXPORT_PAGE) break;
        const last = rows[rows.length - 1] as Record<string, string | number>;
        after = [last.namespace as string, last[key] as string | number];
        await Promise.resolve();
      }
    }
    yield* this.#checkpoints.export(scope);
  }
}

/**
 * The namespace range of an export: one namespace, a tenant's (`tenant:` up to `tenant;`, the
 * character after ':'), or everything.
 */
export function scopeOf(q: ResumeExportQuery): { low: string; high: string } {
  if (q.namespace !== undefined) return { low: q.namespace, high: `${q.namespace}\u0000` };
  if (q.tenant !== undefined) return { low: `${q.tenant}:`, high: `${q.tenant};` };
  return { low: '', high: '\u{10FFFF}' };
}
