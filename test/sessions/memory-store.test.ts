/** Runs the SessionStore conformance suite against the in-memory store. */
import { MemorySessionStore } from '../../src/sessions/memory-store.ts';
import { sessionStoreConformance } from './conformance.ts';

sessionStoreConformance('memory', async (clock) => new MemorySessionStore(clock));
