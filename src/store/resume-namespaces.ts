/**
 * @module
 * Which rows of the resume tables belong to a namespace, for both drivers: the tables a purge erases,
 * and the namespaces a fenced write touches (each must be its fence's). Used by
 * `sqlite/resume-tables.ts` and `postgres/resume-tables.ts`.
 */
import { CHECKPOINT_TABLES } from './checkpoint-sql.ts';
import type { ResumeWrite } from './resume-types.ts';

/** The resume tables (SQLite schema 005, PostgreSQL 002, and the checkpoint tables): a purge erases each. */
export const RESUME_TABLES = [
  'leases',
  'working_states',
  'milestones',
  'turns',
  'outputs',
  'pointers',
  ...CHECKPOINT_TABLES,
] as const;

/** The namespaces a write touches. */
export function namespacesOfWrite(w: ResumeWrite): string[] {
  switch (w.kind) {
    case 'working_state':
      return [w.state.namespace];
    case 'milestone':
      return [w.milestone.namespace];
    case 'turn':
      return w.output ? [w.turn.namespace, w.output.namespace] : [w.turn.namespace];
    case 'output':
      return [w.output.namespace];
    case 'put_pointer':
      return [w.pointer.namespace];
    case 'delete_pointer':
    case 'delete_thread':
      return [w.namespace];
    case 'put_checkpoint':
      return [w.checkpoint.namespace];
    case 'put_checkpoint_writes':
      return [w.namespace, ...w.writes.map((x) => x.namespace)];
  }
}
