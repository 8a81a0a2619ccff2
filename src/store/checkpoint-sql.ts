/**
 * @module
 * The SQL of the checkpoint tables, one text for SQLite and PostgreSQL (both take `ON CONFLICT`,
 * `excluded`, row values and `VALUES` lists): each builder returns the statement and its values, with
 * placeholders in the driver's style. Both drivers compare the key columns bytewise (SQLite BINARY,
 * PostgreSQL COLLATE "C"), so pages and exports come in one order. Row <-> record mapping is here too.
 * Used by `sqlite/checkpoint-tables.ts` and `postgres/checkpoint-tables.ts`.
 */
import type { CheckpointKey, CheckpointQuery, CheckpointRecord, CheckpointWriteRecord } from './checkpoint-types.ts';
import type { ResumeRecordLine } from './resume-types.ts';

/** A statement and its values. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** A driver's placeholder for the n-th value (1-based): `?` or `$n`. */
export type Placeholder = (n: number) => string;

/** Rows per export page. */
export const CHECKPOINT_EXPORT_PAGE = 200;

/** The checkpoint tables (the purge erases each by namespace). */
export const CHECKPOINT_TABLES = ['checkpoints', 'checkpoint_writes'] as const;

const CHECKPOINT_COLUMNS =
  'namespace, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata_type, metadata, at, epoch';
const WRITE_COLUMNS =
  'namespace, thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path, at, epoch';

/** Collects values and hands out placeholders in order. */
function builder(ph: Placeholder) {
  const values: unknown[] = [];
  return {
    values,
    v(value: unknown): string {
      values.push(value);
      return ph(values.length);
    },
  };
}

/** Stores a checkpoint; `replace` overwrites one of the same key (a put), else keeps it (an import). */
export function insertCheckpoint(ph: Placeholder, c: CheckpointRecord, replace: boolean): Statement {
  const b = builder(ph);
  const row = [
    c.namespace,
    c.threadId,
    c.checkpointNs,
    c.checkpointId,
    c.parentCheckpointId,
    c.type,
    c.checkpoint,
    c.metadataType,
    c.metadata,
    c.at,
    c.epoch,
  ].map((x) => b.v(x));
  const onConflict = replace
    ? `DO UPDATE SET parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type,
         checkpoint = excluded.checkpoint, metadata_type = excluded.metadata_type, metadata = excluded.metadata,
         at = excluded.at, epoch = excluded.epoch`
    : 'DO NOTHING';
  return {
    text: `INSERT INTO checkpoints (${CHECKPOINT_COLUMNS}) VALUES (${row.join(', ')})
           ON CONFLICT (namespace, thread_id, checkpoint_ns, checkpoint_id) ${onConflict}`,
    values: b.values,
  };
}

/**
 * Stores a pending write. A special channel's (idx < 0) replaces the one stored; a regular one is
 * kept as first written (a task retried after a crash writes the same values again). An import
 * keeps what is stored either way.
 */
export function insertCheckpointWrite(ph: Placeholder, w: CheckpointWriteRecord, imported: boolean): Statement {
  const b = builder(ph);
  const row = [
    w.namespace,
    w.threadId,
    w.checkpointNs,
    w.checkpointId,
    w.taskId,
    w.idx,
    w.channel,
    w.type,
    w.value,
    w.taskPath,
    w.at,
    w.epoch,
  ].map((x) => b.v(x));
  const onConflict =
    w.idx < 0 && !imported
      ? `DO UPDATE SET channel = excluded.channel, type = excluded.type, value = excluded.value,
           task_path = excluded.task_path, at = excluded.at, epoch = excluded.epoch`
      : 'DO NOTHING';
  return {
    text: `INSERT INTO checkpoint_writes (${WRITE_COLUMNS}) VALUES (${row.join(', ')})
           ON CONFLICT (namespace, thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${onConflict}`,
    values: b.values,
  };
}

/** Erases a thread's checkpoints and pending writes (every checkpoint_ns): two statements. */
export function deleteThread(ph: Placeholder, namespace: string, threadId: string): Statement[] {
  return CHECKPOINT_TABLES.map((table) => ({
    text: `DELETE FROM ${table} WHERE namespace = ${ph(1)} AND thread_id = ${ph(2)}`,
    values: [namespace, threadId],
  }));
}

/** The checkpoints of a query, newest first within a thread. */
export function selectCheckpoints(ph: Placeholder, q: CheckpointQuery): Statement {
  const b = builder(ph);
  const where = [`namespace = ${b.v(q.namespace)}`];
  if (q.threadId !== undefined) where.push(`thread_id = ${b.v(q.threadId)}`);
  if (q.checkpointNs !== undefined) where.push(`checkpoint_ns = ${b.v(q.checkpointNs)}`);
  if (q.checkpointId !== undefined) where.push(`checkpoint_id = ${b.v(q.checkpointId)}`);
  if (q.before !== undefined) where.push(`checkpoint_id < ${b.v(q.before)}`);
  if (q.after !== undefined) {
    const a = q.after;
    where.push(
      `(thread_id, checkpoint_ns, checkpoint_id) < (${b.v(a.threadId)}, ${b.v(a.checkpointNs)}, ${b.v(a.checkpointId)})`,
    );
  }
  return {
    text: `SELECT * FROM checkpoints WHERE ${where.join(' AND ')}
           ORDER BY thread_id DESC, checkpoint_ns DESC, checkpoint_id DESC LIMIT ${b.v(q.limit)}`,
    values: b.values,
  };
}

/** The pending writes of the checkpoints named (at least one). */
export function selectCheckpointWrites(ph: Placeholder, namespace: string, keys: CheckpointKey[]): Statement {
  const b = builder(ph);
  const ns = b.v(namespace);
  const list = keys.map((k) => `(${b.v(k.threadId)}, ${b.v(k.checkpointNs)}, ${b.v(k.checkpointId)})`);
  return {
    text: `SELECT * FROM checkpoint_writes WHERE namespace = ${ns}
           AND (thread_id, checkpoint_ns, checkpoint_id) IN (VALUES ${list.join(', ')})`,
    values: b.values,
  };
}

/** The key columns of each table, in export order. */
const EXPORT_KEYS = {
  checkpoints: ['namespace', 'thread_id', 'checkpoint_ns', 'checkpoint_id'],
  checkpoint_writes: ['namespace', 'thread_id', 'checkpoint_ns', 'checkpoint_id', 'task_id', 'idx'],
} as const;

/**
 * One export page of `table` in the namespace range `scope` (see the drivers' `scopeOf`), after the
 * row `after` (the previous page's last, or null for the first page): keyset pages on the primary key.
 */
export function exportPage(
  ph: Placeholder,
  table: (typeof CHECKPOINT_TABLES)[number],
  scope: { low: string; high: string },
  after: Record<string, unknown> | null,
): Statement {
  const b = builder(ph);
  const keys = EXPORT_KEYS[table];
  const where = [`namespace >= ${b.v(scope.low)}`, `namespace < ${b.v(scope.high)}`];
  if (after) where.push(`(${keys.join(', ')}) > (${keys.map((k) => b.v(after[k])).join(', ')})`);
  return {
    text: `SELECT * FROM ${table} WHERE ${where.join(' AND ')} ORDER BY ${keys.join(', ')} LIMIT ${CHECKPOINT_EXPORT_PAGE}`,
    values: b.values,
  };
}

/** A `checkpoints` row. */
export interface CheckpointRow {
  namespace: string;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: string;
  metadata_type: string;
  metadata: string;
  at: number;
  epoch: number;
}

/** A `checkpoint_writes` row. */
export interface CheckpointWriteRow {
  namespace: string;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  task_id: string;
  idx: number;
  channel: string;
  type: string;
  value: string;
  task_path: string;
  at: number;
  epoch: number;
}

export function checkpointFromRow(r: CheckpointRow): CheckpointRecord {
  return {
    namespace: r.namespace,
    threadId: r.thread_id,
    checkpointNs: r.checkpoint_ns,
    checkpointId: r.checkpoint_id,
    parentCheckpointId: r.parent_checkpoint_id,
    type: r.type,
    checkpoint: r.checkpoint,
    metadataType: r.metadata_type,
    metadata: r.metadata,
    at: r.at,
    epoch: r.epoch,
  };
}

export function checkpointWriteFromRow(r: CheckpointWriteRow): CheckpointWriteRecord {
  return {
    namespace: r.namespace,
    threadId: r.thread_id,
    checkpointNs: r.checkpoint_ns,
    checkpointId: r.checkpoint_id,
    taskId: r.task_id,
    idx: r.idx,
    channel: r.channel,
    type: r.type,
    value: r.value,
    taskPath: r.task_path,
    at: r.at,
    epoch: r.epoch,
  };
}

/** The export line of a row of `table`. */
export function checkpointLine(
  table: (typeof CHECKPOINT_TABLES)[number],
  row: Record<string, unknown>,
): ResumeRecordLine {
  return table === 'checkpoints'
    ? { kind: 'checkpoint', record: checkpointFromRow(row as unknown as CheckpointRow) }
    : { kind: 'checkpoint_write', record: checkpointWriteFromRow(row as unknown as CheckpointWriteRow) };
}
