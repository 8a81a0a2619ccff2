/**
 * @module
 * The namespace bench:resume resumes, loaded over HTTP as an agent would make it: memories (notes,
 * a tenth of them on the words of the working state's focus, open questions and goal, so the briefing's
 * search finds some), a working state, pointers, outputs, and turns recorded under the agent's lease by
 * several clients at once. Deterministic (seeded). Used by bench/resume.ts.
 */
import type { Progress } from '../../src/cli/progress.ts';
import { LoopbackClient } from './http-load.ts';
import { rng } from './memory-data.ts';
import { COMMON_WORDS } from './words.ts';

/** The working state of the benched agent: its words are what the briefing searches memories for. */
export const WORKING_STATE = {
  goal: 'migrate the billing database to postgres without downtime',
  plan: ['inventory the tables', 'dual-write invoices', 'backfill history', 'switch reads', 'retire sqlite'],
  progress: 'dual writes running; backfill at 40%',
  focus: 'backfill of invoices history and its index',
  decisions: ['keep sqlite until reads switch', 'backfill in batches of 5000'],
  open_questions: ['which index serves the invoices lookup by customer?', 'how long may the backfill lock?'],
  notes: 'the staging copy is refreshed nightly',
  step: 3,
};
const TOPIC = ['backfill', 'invoices', 'index', 'postgres', 'billing', 'customer', 'lookup', 'downtime'];

/** A sentence of `n` words from the common vocabulary. */
function sentence(next: () => number, n: number): string {
  return Array.from({ length: n }, () => COMMON_WORDS[Math.floor(next() * COMMON_WORDS.length)]).join(' ');
}

/** Throws unless the answer is 2xx. */
async function ok(client: LoopbackClient, ...args: Parameters<LoopbackClient['send']>): Promise<string> {
  const r = await client.send(...args);
  if (r.status < 200 || r.status >= 300) throw new Error(`${args[0].method} ${args[0].path}: ${r.status} ${r.body}`);
  return r.body;
}

/** What `loadResumeNamespace` stored. */
export interface LoadedNamespace {
  memories: number;
  turns: number;
  outputs: number;
  pointers: number;
}

/**
 * Loads `counts` into the key's namespace.
 * @param o.clients turns recorded at once (each its own keep-alive socket)
 */
export async function loadResumeNamespace(o: {
  url: string;
  key: string;
  memories: number;
  turns: number;
  clients: number;
  progress: Progress;
}): Promise<LoadedNamespace> {
  const client = new LoopbackClient(o.url, { sockets: o.clients, headers: { authorization: `Bearer ${o.key}` } });
  const next = rng(10);
  try {
    for (let i = 0; i < o.memories; i += 500) {
      const statements = Array.from({ length: Math.min(500, o.memories - i) }, (_, j) => {
        const k = i + j;
        const topic = k % 10 === 0 ? ` ${TOPIC[k % TOPIC.length]} ${TOPIC[(k >> 3) % TOPIC.length]}` : '';
        return { subject: `topic-${k % 250}`, predicate: 'note', value: `${sentence(next, 8)}${topic} #${k}` };
      });
      await ok(client, { method: 'POST', path: '/v1/memories', body: { statements } });
      o.progress.tick(statements.length);
    }
    const { epoch } = JSON.parse(
      await ok(client, { method: 'POST', path: '/v1/lease/acquire', body: { holder: 'loader', ttl_ms: 600_000 } }),
    ) as { epoch: number };
    const fenced = { 'x-lease-epoch': String(epoch) };
    await ok(client, { method: 'PATCH', path: '/v1/working-state', body: WORKING_STATE, headers: fenced });
    const pointers = ['repo', 'staging-db', 'backfill-job', 'runbook', 'dashboard'];
    for (const name of pointers) {
      const body = { type: 'external', fields: { id: `${name}-${Math.floor(next() * 1e6)}` }, note: sentence(next, 6) };
      await ok(client, { method: 'PUT', path: `/v1/pointers/${name}`, body, headers: fenced });
    }
    const outputs = 20;
    for (let i = 0; i < outputs; i++) {
      const body = { content: sentence(next, 400), tool: 'sql', summary: `query ${i}: ${sentence(next, 8)}` };
      await ok(client, { method: 'POST', path: '/v1/outputs', body, headers: fenced });
    }
    let sent = 0;
    await Promise.all(
      Array.from({ length: o.clients }, async () => {
        while (sent < o.turns) {
          const i = sent++;
          const body = {
            role: i % 2 === 0 ? 'user' : 'assistant',
            content: sentence(next, 10 + Math.floor(next() * 50)),
            message_id: `load-${i}`,
          };
          await ok(client, { method: 'POST', path: '/v1/turns', body, headers: fenced });
          o.progress.tick();
        }
      }),
    );
    await ok(client, { method: 'POST', path: '/v1/lease/release', body: { epoch } });
    return { memories: o.memories, turns: o.turns, outputs, pointers: pointers.length };
  } finally {
    client.close();
  }
}
