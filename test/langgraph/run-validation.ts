/**
 * Runs LangGraph's checkpointer validation suite (`validation.vitest.ts`) under vitest with globals,
 * prints the counts per saver (ours on SQLite and PostgreSQL, `MemorySaver` as the reference) and
 * exits by `verdict.ts`'s judgement, not by vitest's: a failure the reference shares and is known for
 * is allowed, any other fails the run. `npm test` runs this first.
 */
import { startVitest, type TestModule } from 'vitest/node';
import { judge, neutralName, type Outcome } from './verdict.ts';

const REFERENCE = 'MemorySaver (reference)';
const config = new URL('./vitest.config.ts', import.meta.url).pathname;

const outcomes: Outcome[] = [];
let unhandled = 0;
const collect = {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>) {
    unhandled = errors.length;
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const saver = t.fullName.split(' > ')[0] as string;
        outcomes.push({ saver, test: neutralName(saver, t.fullName), state: t.result().state });
      }
    }
  },
};

const vitest = await startVitest('test', [], { config, run: true, watch: false, reporters: ['dot', collect] });
await vitest.close();

const { counts, problems } = judge(outcomes, REFERENCE);
if (unhandled > 0) problems.push(`${unhandled} unhandled errors`);
console.log('\nLangGraph checkpointer validation (@langchain/langgraph-checkpoint-validation 1.1.1):');
for (const c of counts) {
  const allowed = c.allowed.length > 0 ? `  (allowed, the reference fails it too: ${c.allowed.join('; ')})` : '';
  console.log(`  ${c.saver.padEnd(36)} ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped${allowed}`);
}
if (problems.length > 0) {
  console.log(`verdict: FAIL\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('verdict: pass');
process.exit(0);
