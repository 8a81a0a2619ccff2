import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERROR_STATUS, invalidRequest, TetherError } from '../../src/common/errors.ts';

describe('ERROR_STATUS', () => {
  it('has every code DESIGN.md lists, with its status', () => {
    const design = readFileSync(new URL('../../../shared/DESIGN.md', import.meta.url), 'utf8');
    const line = design.split('\n').find((l) => l.startsWith('Errors are always')) ?? '';
    const rest = design.slice(design.indexOf(line), design.indexOf('Never a stack trace')).replace(/\s+/g, ' ');
    const listed = new Map<string, number>();
    for (const m of rest.matchAll(/(\d{3}) ((?:`[a-z_]+`(?: \| )?)+)/g)) {
      for (const c of (m[2] as string).matchAll(/`([a-z_]+)`/g)) listed.set(c[1] as string, Number(m[1]));
    }
    assert.ok(listed.size >= 14, `parsed ${listed.size} codes`);
    for (const [code, status] of listed) {
      assert.equal(ERROR_STATUS[code as keyof typeof ERROR_STATUS], status, code);
    }
  });
});

describe('TetherError', () => {
  it('carries status, field and the wire body', () => {
    const e = invalidRequest('statements[2].value', 'must be a number');
    assert.equal(e.status, 400);
    assert.equal(e.field, 'statements[2].value');
    assert.deepEqual(e.toBody(), {
      error: { code: 'invalid_request', message: 'statements[2].value: must be a number' },
    });
    assert.equal(new TetherError('lease_lost', 'x').status, 409);
  });
});
