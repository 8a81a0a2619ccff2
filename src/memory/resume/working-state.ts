/**
 * @module
 * Working state: the empty state, and the merge of a patch (the known fields it names replace the
 * stored ones; arrays are replaced whole; null clears) into the next version. Pure; used by `records.ts`.
 */
import type { WorkingStateFields, WorkingStateRecord } from '../../store/resume-types.ts';

/** A working-state patch: any of the writable fields. */
export type WorkingStatePatch = Partial<WorkingStateFields>;

/** The fields of a namespace that has no working state yet. */
export const EMPTY_STATE: Readonly<WorkingStateFields> = Object.freeze({
  goal: null,
  plan: [],
  progress: null,
  focus: null,
  decisions: [],
  openQuestions: [],
  notes: null,
  step: null,
  lastMilestone: null,
});

/** The writable field names, in wire order. */
export const STATE_FIELDS = Object.keys(EMPTY_STATE) as (keyof WorkingStateFields)[];

/**
 * The next version: `patch` merged into `current` (or into the empty state).
 * @param stamp the namespace, the writer's epoch and the time (epoch ms) of the write
 */
export function mergeState(
  current: WorkingStateRecord | null,
  patch: WorkingStatePatch,
  stamp: { namespace: string; epoch: number; now: number },
): WorkingStateRecord {
  const base: WorkingStateFields = current ?? { ...EMPTY_STATE };
  const next = { ...base } as Record<keyof WorkingStateFields, unknown>;
  for (const field of STATE_FIELDS) {
    const value = patch[field];
    if (value !== undefined) next[field] = value;
  }
  return {
    ...(next as unknown as WorkingStateFields),
    namespace: stamp.namespace,
    version: (current?.version ?? 0) + 1,
    updatedAt: stamp.now,
    epoch: stamp.epoch,
  };
}
