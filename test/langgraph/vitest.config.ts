/** Vitest config of the LangGraph validation run (`run-validation.ts`): globals, one file, generous timeouts. */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/langgraph/*.vitest.ts'],
    globals: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
