/**
 * Import checks resume records as the write path would have made them (issue 21, point 5), through
 * `inject()`: seq, version, epoch and step within the ranges writes produce, times no later than a
 * write takes, non-empty names and contents, a turn no longer than a written turn keeps, pointer fields
 * as `PUT /v1/pointers` takes them, an output's bytes its content's size; an event with `kind: ""` is
 * refused. A refusal names the line and field and stores nothing; after the largest accepted numbers
 * the next write to the namespace succeeds.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { MAX_RECORD_SEQ } from '../../src/memory/resume/record-check.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

const clock = new ManualClock(Date.UTC(2026, 0, 1));
let server: TestMemoryServer;
/** The source namespace's export, by line kind (`turn`, `output`, … and `event`). */
const exported = new Map<string, Record<string, any>>();
let n = 0;

type Reply = { status: number; body: any };
async function inject(method: string, url: string, key: string, payload?: unknown, headers = {}): Promise<Reply> {
  const res = await server.running.server.app.inject({
    method: method as 'POST',
    url,
    headers: { authorization: `Bearer ${key}`, ...headers },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
  let body: unknown = res.body;
  try {
    body = res.json();
  } catch {}
  return { status: res.statusCode, body };
}
const importLines = (...lines: unknown[]) =>
  inject('POST', '/v1/events/import', server.adminKey, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`, {
    'content-type': 'application/x-ndjson',
  });
/** A namespace no test used yet. */
const freshNamespace = () => `agents:dst-${++n}`;
/** The exported line of `kind` moved to `namespace`, with `over` applied to its record. */
const recordLine = (kind: string, namespace: string, over: Record<string, unknown> = {}) => ({
  resume_record: { ...exported.get(kind), namespace, ...over },
});

before(async () => {
  server = await startTestMemoryServer({ clock });
  const key = await server.agentKey('agents', 'src', 86_400);
  const lease = await inject('POST', '/v1/lease/acquire', key, { holder: 'pod' });
  const fenced = { 'x-lease-epoch': String(lease.body.epoch) };
  const writes: [string, string, unknown][] = [
    ['PATCH', '/v1/working-state', { goal: 'ship it', step: 3 }],
    ['POST', '/v1/milestones', { name: 'tests green' }],
    ['POST', '/v1/turns', { role: 'user', content: 'hello' }],
    ['POST', '/v1/outputs', { content: 'a tool output', tool: 'grep' }],
    ['PUT', '/v1/pointers/repo', { type: 'git_ref', fields: { ref: 'main' } }],
    ['POST', '/v1/memories', { subject: 'user', predicate: 'note', value: 'likes tea' }],
  ];
  for (const [method, path, body] of writes) {
    const r = await inject(method, path, key, body, fenced);
    assert.ok(r.status < 300, `${method} ${path}: ${JSON.stringify(r.body)}`);
  }
  const all = await inject('GET', '/v1/events?namespace=agents:src', server.adminKey);
  for (const text of String(all.body).trim().split('\n')) {
    const line = JSON.parse(text);
    if (line.resume_record) exported.set(line.resume_record.kind, line.resume_record);
    else if (line.id) exported.set('event', line);
  }
  assert.deepEqual([...exported.keys()].sort(), ['event', 'milestone', 'output', 'pointer', 'turn', 'working_state']);
});
after(() => server.close());

describe('POST /v1/events/import checks resume records like writes', () => {
  const refusals: [string, string, Record<string, unknown>, RegExp][] = [
    ['a turn seq of 2^53-1', 'turn', { seq: 2 ** 53 - 1 }, /^line 1\.resume_record\.seq: must be at most/],
    ['a working-state version of 2^53-1', 'working_state', { version: 2 ** 53 - 1 }, /\.version: must be at most/],
    ['an epoch of 2^53-1', 'milestone', { epoch: 2 ** 53 - 1 }, /\.epoch: must be at most/],
    ['a step above what a patch takes', 'working_state', { step: 2 ** 31 }, /\.step: /],
    ['a milestone with no name', 'milestone', { name: '' }, /\.name: must not be empty/],
    ['an empty turn', 'turn', { content: '' }, /\.content: must not be empty/],
    ['a turn above the turn limit', 'turn', { content: 'x'.repeat(9000) }, /\.content: is 2250 tokens; a turn keeps/],
    ['a turn time in the future', 'turn', { at: Date.UTC(2027, 0, 1) }, /\.at: is in the future/],
    ['a pointer time in the future', 'pointer', { updated_at: Date.UTC(2027, 0, 1) }, /\.updated_at: is in the future/],
    [
      'a pointer with 33 fields',
      'pointer',
      { fields: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`f${i}`, 'v'])) },
      /\.fields: must have at most 32 fields/,
    ],
    ['an output whose bytes lie', 'output', { bytes: 1 }, /\.bytes: must be the content's size in UTF-8 bytes \(13\)/],
    ['an empty output', 'output', { content: '', bytes: 0 }, /\.content: must not be empty/],
  ];
  for (const [what, kind, over, message] of refusals) {
    it(`refuses ${what}, naming the line and field, and stores nothing`, async () => {
      const ns = freshNamespace();
      const r = await importLines(recordLine(kind, ns, over));
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, message);
      const after = await inject('GET', `/v1/events?namespace=${ns}`, server.adminKey);
      assert.equal(String(after.body).trim(), '');
    });
  }

  it('refuses an event with kind ""', async () => {
    const ns = freshNamespace();
    const event = { ...exported.get('event'), namespace: ns, kind: '' };
    const r = await importLines(recordLine('turn', ns), event);
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.match(r.body.error.message, /^line 2\.kind: must not be empty/);
  });

  it('takes the largest numbers a write can reach, and the next writes to the namespace succeed', async () => {
    const ns = freshNamespace();
    const top = MAX_RECORD_SEQ;
    const r = await importLines(
      recordLine('working_state', ns, { version: top, epoch: top }),
      recordLine('milestone', ns, { seq: top }),
      recordLine('turn', ns, { seq: top }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.resume_records, 3);
    const key = await server.agentKey('agents', ns.slice('agents:'.length), 86_400);
    const lease = await inject('POST', '/v1/lease/acquire', key, {});
    assert.equal(lease.status, 200, JSON.stringify(lease.body));
    const fenced = { 'x-lease-epoch': String(lease.body.epoch) };
    const turn = await inject('POST', '/v1/turns', key, { role: 'user', content: 'after' }, fenced);
    assert.equal(turn.status, 201, JSON.stringify(turn.body));
    assert.equal(turn.body.seq, top + 1);
    const state = await inject('PATCH', '/v1/working-state', key, { goal: 'next' }, fenced);
    assert.equal(state.status, 200, JSON.stringify(state.body));
    assert.equal(state.body.version, top + 1);
    const milestone = await inject('POST', '/v1/milestones', key, { name: 'next' }, fenced);
    assert.equal(milestone.status, 201, JSON.stringify(milestone.body));
    assert.equal(milestone.body.milestone.seq, top + 1);
  });
});
