/**
 * @module
 * LangGraph checkpoints and pending writes in the PostgreSQL store (schema 006): the fenced write
 * kinds (`put_checkpoint`, `put_checkpoint_writes`, `delete_thread`), applied on the client of the
 * resume write's transaction (its lease row locked) by `PostgresResumeTables`, plus reads, import and
 * export. SQL from `checkpoint-sql.ts`.
 */
import {
  CHECKPOINT_EXPORT_PAGE,
  CHECKPOINT_TABLES,
  type CheckpointRow,
  type CheckpointWriteRow,
  checkpointFromRow,
  checkpointLine,
  checkpointWriteFromRow,
  deleteThread,
  exportPage,
  insertCheckpoint,
  insertCheckpointWrite,
  type Statement,
  selectCheckpoints,
  selectCheckpointWrites,
} from '../checkpoint-sql.ts';
import type { CheckpointKey, CheckpointQuery, CheckpointRecord, CheckpointWriteRecord } from '../checkpoint-types.ts';
import type { ResumeRecordLine, ResumeWrite, ResumeWriteResult } from '../resume-types.ts';
import type { Queryable } from './queries.ts';

const ph = (n: number) => `$${n}`;

/** The checkpoint write kinds. */
export type CheckpointWrite = Extract<
  ResumeWrite,
  { kind: 'put_checkpoint' | 'put_checkpoint_writes' | 'delete_thread' }
>;

async function run(db: Queryable, s: Statement): Promise<number> {
  return (await db.query(s.text, s.values)).rowCount ?? 0;
}

/** Applies one write on `c`, the fenced transaction's client. */
export async function applyCheckpointWrite(c: Queryable, w: CheckpointWrite): Promise<ResumeWriteResult> {
  switch (w.kind) {
    case 'put_checkpoint':
      await run(c, insertCheckpoint(ph, w.checkpoint, true));
      return { kind: 'put_checkpoint' };
    case 'put_checkpoint_writes': {
      let stored = 0;
      for (const one of w.writes) stored += await run(c, insertCheckpointWrite(ph, one, false));
      return { kind: 'put_checkpoint_writes', stored };
    }
    case 'delete_thread': {
      let deleted = 0;
      for (const s of deleteThread(ph, w.namespace, w.threadId)) deleted += await run(c, s);
      return { kind: 'delete_thread', deleted };
    }
  }
}

/** Imports one line on `c` (the import's transaction), keeping a stored key. */
export function importCheckpointLine(
  c: Queryable,
  line: Extract<ResumeRecordLine, { kind: 'checkpoint' | 'checkpoint_write' }>,
): Promise<number> {
  return line.kind === 'checkpoint'
    ? run(c, insertCheckpoint(ph, line.record, false))
    : run(c, insertCheckpointWrite(ph, line.record, true));
}

export async function readCheckpoints(db: Queryable, q: CheckpointQuery): Promise<CheckpointRecord[]> {
  const s = selectCheckpoints(ph, q);
  return (await db.query<CheckpointRow>(s.text, s.values)).rows.map(checkpointFromRow);
}

export async function readCheckpointWrites(
  db: Queryable,
  namespace: string,
  keys: CheckpointKey[],
): Promise<CheckpointWriteRecord[]> {
  if (keys.length === 0) return [];
  const s = selectCheckpointWrites(ph, namespace, keys);
  return (await db.query<CheckpointWriteRow>(s.text, s.values)).rows.map(checkpointWriteFromRow);
}

/** Export pages of both tables in the namespace range, keyset-paginated so writes may run between pages. */
export async function* exportCheckpoints(
  db: Queryable,
  scope: { low: string; high: string },
): AsyncGenerator<ResumeRecordLine> {
  for (const table of CHECKPOINT_TABLES) {
    let after: Record<string, unknown> | null = null;
    for (;;) {
      const s = exportPage(ph, table, scope, after);
      const rows = (await db.query<Record<string, unknown>>(s.text, s.values)).rows;
      for (const row of rows) yield checkpointLine(table, row);
      if (rows.length < CHECKPOINT_EXPORT_PAGE) break;
      after = rows[rows.length - 1] as Record<string, unknown>;
    }
  }
}
