import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { z } from 'zod';
import { unavailable } from '../../src/common/errors.ts';
import { installErrorHandlers } from '../../src/server/error-handler.ts';
import { jsonSerializerCompiler, zodValidatorCompiler } from '../../src/server/zod-routes.ts';

/** A Fastify app with the server's error handlers and Zod validation, its log lines kept in `lines`. */
async function errorApp() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const app = Fastify({ loggerInstance: pino({ level: 'info' }, sink) as FastifyBaseLogger });
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(jsonSerializerCompiler);
  installErrorHandlers(app);
  app.post('/facts', { schema: { body: z.strictObject({ value: z.number() }) } }, async () => ({ ok: true }));
  app.get('/busy', async () => {
    throw unavailable('the store is busy', 3);
  });
  app.get('/bug', async () => {
    throw new Error('connect postgres://tether:s3cret@db failed');
  });
  await app.ready();
  return { app, lines };
}

describe('the memory server error handler', () => {
  it('answers a Zod validation failure with 400 naming the field', async (t) => {
    const { app } = await errorApp();
    t.after(() => app.close());
    const res = await app.inject({ method: 'POST', url: '/facts', payload: { value: 'seven' } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.code, 'invalid_request');
    assert.match(res.json().error.message, /^value: /);
    const unknown = await app.inject({ method: 'POST', url: '/facts', payload: { value: 1, extra: 2 } });
    assert.equal(unknown.json().error.message, 'extra: unknown field');
  });

  it('answers malformed JSON with 400 naming body', async (t) => {
    const { app } = await errorApp();
    t.after(() => app.close());
    const res = await app.inject({
      method: 'POST',
      url: '/facts',
      headers: { 'content-type': 'application/json' },
      payload: '{"value": ',
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error.message, /^body: /);
  });

  it('passes a TetherError through with its status and Retry-After', async (t) => {
    const { app } = await errorApp();
    t.after(() => app.close());
    const res = await app.inject({ method: 'GET', url: '/busy' });
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['retry-after'], '3');
    assert.deepEqual(res.json(), { error: { code: 'unavailable', message: 'the store is busy' } });
  });

  it('answers an unknown error with 500 and an id that names its log line, never its message', async (t) => {
    const { app, lines } = await errorApp();
    t.after(() => app.close());
    const res = await app.inject({ method: 'GET', url: '/bug' });
    assert.equal(res.statusCode, 500);
    const { code, message } = res.json().error;
    assert.equal(code, 'internal');
    const id = /^internal error; quote id ([0-9a-f-]{36}) to the operator$/.exec(message)?.[1];
    assert.ok(id, message);
    assert.doesNotMatch(res.body, /s3cret|postgres|stack/);
    const logged = lines.find((l) => l.errorId === id);
    assert.ok(logged, 'the id is in a log line');
    assert.equal(logged.level, 50);
  });
});
