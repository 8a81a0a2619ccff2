import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger, isPretty } from '../../src/common/log.ts';

function collect(): { stream: Writable; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

describe('createLogger', () => {
  it('writes one readable line per entry in pretty format: time, level, component, message, fields', () => {
    const out = collect();
    const log = createLogger({ name: 'tether-up', format: 'pretty', destination: out.stream });
    log.child({ component: 'gateway' }).info({ service: 'ai-agent', instances: 2 }, 'gateway listening');
    const [line, ...rest] = out.lines();
    assert.equal(rest.length, 0);
    assert.match(
      line as string,
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[gateway\] gateway listening \{.*"service":"ai-agent"/,
    );
    assert.doesNotMatch(line as string, /tether-up|"pid"|hostname/);
  });

  it('redacts secrets in pretty lines as in JSON ones', () => {
    const out = collect();
    createLogger({ format: 'pretty', destination: out.stream }).info(
      { key: 'tth_secret', headers: { authorization: 'Bearer x' } },
      'hi',
    );
    assert.doesNotMatch(out.lines().join('\n'), /tth_secret|Bearer x/);
  });

  it('writes JSON lines in json format', () => {
    const out = collect();
    createLogger({ name: 'tether-memory', format: 'json', destination: out.stream }).warn({ n: 1 }, 'slow');
    const entry = JSON.parse(out.lines()[0] as string);
    assert.equal(entry.msg, 'slow');
    assert.equal(entry.level, 40);
    assert.equal(entry.name, 'tether-memory');
  });

  it('refuses an unknown format, naming the choices', () => {
    assert.throws(() => createLogger({ format: 'yaml' as never }), /auto, json, pretty: got 'yaml'/);
  });
});

describe('isPretty', () => {
  it('is pretty on a terminal in auto, JSON otherwise, and the flag wins', () => {
    assert.equal(isPretty('auto', true), true);
    assert.equal(isPretty('auto', false), false);
    assert.equal(isPretty('json', true), false);
    assert.equal(isPretty('pretty', false), true);
  });
});
