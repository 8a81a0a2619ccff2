/**
 * The example's graph: a LangGraph `StateGraph` of five deterministic steps (no model), each adding
 * one line to the log saying which instance ran it. Compiled to stop after every step, so each call
 * of `advance` runs one step and checkpoints it: a run spread over requests, and over instances.
 */
import { Annotation, type BaseCheckpointSaver, END, START, StateGraph } from '@langchain/langgraph';

/** The steps, in order. */
export const STEPS = ['plan', 'gather', 'draft', 'review', 'publish'] as const;

const State = Annotation.Root({
  task: Annotation<string>(),
  step: Annotation<number>({ reducer: (_old, next) => next, default: () => 0 }),
  log: Annotation<string[]>({ reducer: (old, next) => old.concat(next), default: () => [] }),
});

/** The pipeline graph over `checkpointer`; `instance` names who ran each step. */
export function pipeline(checkpointer: BaseCheckpointSaver, instance: string) {
  const step = (name: string) => (s: typeof State.State) => ({
    step: s.step + 1,
    log: [`${s.step + 1}. ${name} (${instance})`],
  });
  return new StateGraph(State)
    .addNode('plan', step('plan'))
    .addNode('gather', step('gather'))
    .addNode('draft', step('draft'))
    .addNode('review', step('review'))
    .addNode('publish', step('publish'))
    .addEdge(START, 'plan')
    .addEdge('plan', 'gather')
    .addEdge('gather', 'draft')
    .addEdge('draft', 'review')
    .addEdge('review', 'publish')
    .addEdge('publish', END)
    .compile({ checkpointer, interruptAfter: [...STEPS] });
}

/** Where a thread stands after `advance`. */
export interface Progress {
  step: number;
  log: string[];
  done: boolean;
  next: string[];
  checkpoint_id: string | undefined;
}

/** Runs the thread's next step (the first one with `task` when the thread is new). */
export async function advance(graph: ReturnType<typeof pipeline>, threadId: string, task: string): Promise<Progress> {
  const config = { configurable: { thread_id: threadId } };
  const before = await graph.getState(config);
  const started = before.values.step !== undefined && before.values.step > 0;
  if (!started) await graph.invoke({ task }, config);
  else if (before.next.length > 0) await graph.invoke(null, config);
  const after = await graph.getState(config);
  return {
    step: after.values.step,
    log: after.values.log,
    done: after.next.length === 0,
    next: [...after.next],
    checkpoint_id: after.config.configurable?.checkpoint_id,
  };
}
