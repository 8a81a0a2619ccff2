/**
 * @module
 * The import worker's entry (`import-off-loop.ts` starts it, as .ts under tsx or as compiled .js): the
 * thread first lowers its OS priority (`common/thread-priority.ts`), then loads its code
 * (`import-worker-loop.ts`, the schemas and checks: ~0.1 s of a core), so even its start leaves the
 * CPU to the event loop on a machine of few cores.
 */
import { lowerThreadPriority } from '../common/thread-priority.ts';

lowerThreadPriority();
await import('./import-worker-loop.ts');
