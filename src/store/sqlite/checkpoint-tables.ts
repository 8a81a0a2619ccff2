/**
 * @module
 * LangGraph checkpoints and pending writes in the SQLite store (schema 008): the fenced write kinds
 * (`put_checkpoint`, `put_checkpoint_writes`, `delete_thread`), applied inside the resume write's
 * transaction by `SqliteResumeTables`, plus reads, import and export. SQL from `checkpoint-sql.ts`.
 */
import type Database from 'better-sqlite3';
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

const ph = () => '?';

/** The checkpoint write kinds. */
export type CheckpointWrite = Extract<
  ResumeWrite,
  { kind: 'put_checkpoint' | 'put_checkpoint_writes' | 'delete_thread' }
>;

/** Checkpoint rows over one better-sqlite3 connection. */
export class SqliteCheckpointTables {
  readonly #sql: (text: string) => Database.Statement;

  constructor(sql: (text: string) => Database.Statement) {
    this.#sql = sql;
  }

  #run(s: Statement): number {
    return this.#sql(s.text).run(...s.values).changes;
  }

  /** Applies one write; call inside the fenced transaction. */
  apply(w: CheckpointWrite): ResumeWriteResult {
    switch (w.kind) {
      case 'put_checkpoint':
        this.#run(insertCheckpoint(ph, w.checkpoint, true));
        return { kind: 'put_checkpoint' };
      case 'put_checkpoint_writes': {
        let stored = 0;
        for (const one of w.writes) stored += this.#run(insertCheckpointWrite(ph, one, false));
        return { kind: 'put_checkpoint_writes', stored };
      }
      case 'delete_thread': {
        let deleted = 0;
        for (const s of deleteThread(ph, w.namespace, w.threadId)) deleted += this.#run(s);
        return { kind: 'delete_thread', deleted };
      }
    }
  }

  /** Imports one line, keeping a stored key; call inside the import's transaction. */
  importOne(line: Extract<ResumeRecordLine, { kind: 'checkpoint' | 'checkpoint_write' }>): number {
    return line.kind === 'checkpoint'
      ? this.#run(insertCheckpoint(ph, line.record, false))
      : this.#run(insertCheckpointWrite(ph, line.record, true));
  }

  checkpoints(q: CheckpointQuery): CheckpointRecord[] {
    const s = selectCheckpoints(ph, q);
    return (this.#sql(s.text).all(...s.values) as CheckpointRow[]).map(checkpointFromRow);
  }

  checkpointWrites(namespace: string, keys: CheckpointKey[]): CheckpointWriteRecord[] {
    if (keys.length === 0) return [];
    const s = selectCheckpointWrites(ph, namespace, keys);
    return (this.#sql(s.text).all(...s.values) as CheckpointWriteRow[]).map(checkpointWriteFromRow);
  }

  /** Export pages of both tables in the namespace range, keyset-paginated so writes may run between pages. */
  async *export(scope: { low: string; high: string }): AsyncGenerator<ResumeRecordLine> {
    for (const table of CHECKPOINT_TABLES) {
      let after: Record<string, unknown> | null = null;
      for (;;) {
        const s = exportPage(ph, table, scope, after);
        const rows = this.#sql(s.text).all(...s.values) as Record<string, unknown>[];
        for (const row of rows) yield checkpointLine(table, row);
        if (rows.length < CHECKPOINT_EXPORT_PAGE) break;
        after = rows[rows.length - 1] as Record<string, unknown>;
        await Promise.resolve();
      }
    }
  }
}
