/**
 * The resume record routes: working state PATCH/GET/history, milestones (201), turns (201, 200 for
 * a repeated message_id, paging), outputs (201, 413 above 1 MiB, GET by ref), pointers (PUT, GET,
 * DELETE 204 / 404), admin reads for the console, and another agent's key refused with 403.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../../helpers/memory-server.ts';

describe('resume record routes', () => {
  let server: TestMemoryServer;
  let key: string;
  let other: string;
  let headers: Record<string, string>;
  before(async () => {
    server = await startTestMemoryServer();
    key = await server.agentKey('agents', 'run-1');
    other = await server.agentKey('agents', 'run-2');
    const lease = await server.call('POST', '/v1/lease/acquire', { key, body: { holder: 'pod-a', ttl_ms: 3_600_000 } });
    headers = { 'x-lease-epoch': String(lease.body.epoch) };
  });
  after(() => server.close());

  it('patches the working state into versions and reads earlier ones', async () => {
    const v1 = await server.call('PATCH', '/v1/working-state', {
      key,
      headers,
      body: { goal: 'ship', plan: ['build', 'test'], step: 1, open_questions: ['which tag?'] },
    });
    assert.equal(v1.status, 200, v1.text);
    const v2 = await server.call('PATCH', '/v1/working-state', { key, headers, body: { step: 2, progress: 'built' } });
    assert.deepEqual(
      [v2.body.version, v2.body.goal, v2.body.step, v2.body.progress, v2.body.open_questions],
      [2, 'ship', 2, 'built', ['which tag?']],
    );
    const got = await server.call('GET', '/v1/working-state', { key });
    assert.deepEqual(got.body, v2.body);
    const history = await server.call('GET', '/v1/working-state/history?limit=5', { key });
    assert.deepEqual(
      history.body.versions.map((v: { version: number }) => v.version),
      [2, 1],
    );
    const older = await server.call('GET', '/v1/working-state/history?before_version=2', { key });
    assert.deepEqual(
      older.body.versions.map((v: { step: number }) => v.step),
      [1],
    );
  });

  it('records milestones (201) and sets last_milestone', async () => {
    const m = await server.call('POST', '/v1/milestones', { key, headers, body: { name: 'built', progress: '1/2' } });
    assert.equal(m.status, 201, m.text);
    assert.equal(m.body.milestone.name, 'built');
    assert.equal(m.body.working_state.last_milestone, 'built');
    assert.equal(m.body.working_state.progress, '1/2');
    const list = await server.call('GET', '/v1/milestones', { key });
    assert.deepEqual(
      list.body.milestones.map((x: { name: string }) => x.name),
      ['built'],
    );
  });

  it('records turns (201), answers a repeated message_id with the first seq (200), pages backwards', async () => {
    const t1 = await server.call('POST', '/v1/turns', {
      key,
      headers,
      body: { role: 'user', content: 'one', message_id: 'a' },
    });
    assert.equal(t1.status, 201, t1.text);
    const again = await server.call('POST', '/v1/turns', {
      key,
      headers,
      body: { role: 'user', content: 'one', message_id: 'a' },
    });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, { seq: t1.body.seq, duplicate: true, output_ref: null });
    for (const c of ['two', 'three'])
      await server.call('POST', '/v1/turns', { key, headers, body: { role: 'assistant', content: c } });
    const page = await server.call('GET', '/v1/turns?limit=2', { key });
    assert.deepEqual(
      page.body.turns.map((t: { content: string }) => t.content),
      ['two', 'three'],
    );
    assert.equal(page.body.total, 3);
    const before = await server.call('GET', `/v1/turns?before_seq=${page.body.turns[0].seq}`, { key });
    assert.deepEqual(
      before.body.turns.map((t: { content: string }) => t.content),
      ['one'],
    );
  });

  it('stores a large turn content as an output and keeps its opening and ref', async () => {
    const big = 'x'.repeat(9000);
    const r = await server.call('POST', '/v1/turns', {
      key,
      headers,
      body: { role: 'tool', name: 'shell', content: big },
    });
    assert.equal(r.status, 201, r.text);
    assert.match(r.body.output_ref, /^out_/);
    const out = await server.call('GET', `/v1/outputs/${r.body.output_ref}`, { key });
    assert.equal(out.body.content, big);
  });

  it('stores outputs (201), fetches them by ref, lists them, refuses above 1 MiB with 413', async () => {
    const r = await server.call('POST', '/v1/outputs', {
      key,
      headers,
      body: { content: 'result', tool: 'pytest', summary: 'ok' },
    });
    assert.equal(r.status, 201, r.text);
    const got = await server.call('GET', `/v1/outputs/${r.body.ref}`, { key });
    assert.deepEqual([got.body.content, got.body.tool, got.body.bytes], ['result', 'pytest', 6]);
    const big = await server.call('POST', '/v1/outputs', {
      key,
      headers,
      body: { content: 'y'.repeat(1024 * 1024 + 1) },
    });
    assert.equal(big.status, 413, big.text);
    assert.equal(big.body.error.code, 'too_large');
    const list = await server.call('GET', '/v1/outputs', { key });
    assert.equal(list.body.outputs[0].ref, r.body.ref);
    assert.equal(list.body.outputs.length, 2);
    const missing = await server.call('GET', `/v1/outputs/out_${'0'.repeat(26)}`, { key });
    assert.equal(missing.status, 404);
  });

  it('sets, lists and deletes pointers (204; 404 for none)', async () => {
    const put = await server.call('PUT', '/v1/pointers/repo', {
      key,
      headers,
      body: { type: 'git_ref', fields: { url: 'https://example.com/r.git', ref: 'main' }, note: 'the work' },
    });
    assert.equal(put.status, 200, put.text);
    const list = await server.call('GET', '/v1/pointers', { key });
    assert.deepEqual(
      list.body.pointers.map((p: { name: string; type: string }) => [p.name, p.type]),
      [['repo', 'git_ref']],
    );
    assert.equal((await server.call('DELETE', '/v1/pointers/repo', { key, headers })).status, 204);
    const gone = await server.call('DELETE', '/v1/pointers/repo', { key, headers });
    assert.equal(gone.status, 404);
  });

  it('lets an admin of the tenant read the records (the console), and refuses another agent with 403', async () => {
    const admin = await server.call('GET', '/v1/working-state?namespace=agents:run-1', { key: server.adminKey });
    assert.equal(admin.body.goal, 'ship');
    const lease = await server.call('GET', '/v1/lease?namespace=agents:run-1', { key: server.adminKey });
    assert.equal(lease.body.holder, 'pod-a');
    for (const path of ['/v1/working-state', '/v1/turns', '/v1/pointers', '/v1/outputs']) {
      const r = await server.call('GET', `${path}?namespace=agents:run-1`, { key: other });
      assert.equal(r.status, 403, path);
      assert.equal(r.body.error.code, 'namespace_mismatch');
    }
    const resume = await server.call('POST', '/v1/resume', { key: other, body: { namespace: 'agents:run-1' } });
    assert.equal(resume.status, 403);
    assert.equal(resume.body.error.code, 'namespace_mismatch');
  });

  it('resumes with defer: the records and a briefing, the lease untouched', async () => {
    const r = await server.call('POST', '/v1/resume', { key, body: { defer: true, token_budget: 1000 } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.agent, 'run-1');
    assert.equal(r.body.epoch, null);
    assert.equal(r.body.lease.holder, 'pod-a');
    assert.equal(r.body.working_state.goal, 'ship');
    assert.ok(r.body.tokens <= 1000);
    assert.match(r.body.briefing, /Goal: ship/);
    assert.equal(r.body.fresh, false);
  });
});

describe('resume records in export and import', () => {
  let server: TestMemoryServer;
  before(async () => {
    server = await startTestMemoryServer();
  });
  after(() => server.close());

  it('carries every record kind through export, purge and import (repeats skipped)', async () => {
    const key = await server.agentKey('agents', 'backup');
    const lease = await server.call('POST', '/v1/lease/acquire', { key, body: {} });
    const headers = { 'x-lease-epoch': String(lease.body.epoch) };
    await server.call('POST', '/v1/memories', { key, body: { subject: 'user', predicate: 'note', value: 'a fact' } });
    await server.call('PATCH', '/v1/working-state', { key, headers, body: { goal: 'backed up', plan: ['x'] } });
    await server.call('POST', '/v1/milestones', { key, headers, body: { name: 'm' } });
    await server.call('POST', '/v1/turns', { key, headers, body: { role: 'user', content: 'hello', message_id: 'h' } });
    await server.call('POST', '/v1/outputs', { key, headers, body: { content: 'out', tool: 't' } });
    await server.call('PUT', '/v1/pointers/repo', { key, headers, body: { type: 'git_ref', fields: { ref: 'main' } } });
    const reads = async () => ({
      state: (await server.call('GET', '/v1/working-state', { key })).body,
      turns: (await server.call('GET', '/v1/turns', { key })).body,
      milestones: (await server.call('GET', '/v1/milestones', { key })).body,
      outputs: (await server.call('GET', '/v1/outputs', { key })).body,
      pointers: (await server.call('GET', '/v1/pointers', { key })).body,
    });
    const before = await reads();
    const exported = await server.call('GET', '/v1/events', { key });
    const lines = exported.text.trim().split('\n');
    assert.equal(
      lines.filter((l) => l.includes('"resume_record"')).length,
      6,
      'two working-state versions and one of each other kind',
    );

    await server.call('DELETE', '/v1/namespaces/agents:backup', { key: server.adminKey });
    assert.equal((await server.call('GET', '/v1/turns', { key })).body.total, 0);
    const imp = await server.call('POST', '/v1/events/import', {
      key: server.adminKey,
      body: exported.text,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(imp.status, 200, imp.text);
    assert.equal(imp.body.resume_records, 6);
    assert.deepEqual(await reads(), before);
    const again = await server.call('POST', '/v1/events/import', {
      key: server.adminKey,
      body: exported.text,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(again.body.resume_records, 0);
  });

  it('refuses a bad resume record line naming the line and field, storing nothing', async () => {
    const line = JSON.stringify({
      resume_record: {
        kind: 'turn',
        namespace: 'agents:bad',
        seq: 1,
        role: 'bot',
        content: 'x',
        name: null,
        message_id: null,
        brief: null,
        output_ref: null,
        at: 0,
        epoch: 1,
      },
    });
    const r = await server.call('POST', '/v1/events/import', {
      key: server.adminKey,
      body: `${line}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(r.status, 400, r.text);
    assert.match(r.body.error.message, /^line 1\.resume_record\.role:/);
  });
});
