import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_STATUS, invalidRequest, TetherError, toTetherError } from '../../src/common/errors.ts';

const ROOT = join(import.meta.dirname, '../..');

/**
 * Where the design is: `TETHER_DESIGN_MD`, else `../shared/DESIGN.md` beside this checkout (CI's clone), else
 * beside the main checkout when this is a git worktree of it. Every place tried, for the failure message.
 */
function designCandidates(): string[] {
  const places = [join(ROOT, '../shared/DESIGN.md')];
  if (process.env.TETHER_DESIGN_MD) places.unshift(process.env.TETHER_DESIGN_MD);
  try {
    const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    places.push(join(dirname(common), '../shared/DESIGN.md'));
  } catch {
    // not a git checkout: the other places only
  }
  return [...new Set(places)];
}

/** `code -> status` pairs written as "`code` | status" rows of a markdown table. */
function documented(markdown: string): Map<string, number> {
  const rows = new Map<string, number>();
  for (const m of markdown.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)) rows.set(m[1] as string, Number(m[2]));
  return rows;
}

describe('ERROR_STATUS', () => {
  it('is exactly the table of docs/errors.md', () => {
    const docs = documented(readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8'));
    assert.deepEqual(Object.fromEntries(docs), { ...ERROR_STATUS });
  });

  it('has every code DESIGN.md lists, with its status', () => {
    const places = designCandidates();
    const design = places.find((p) => existsSync(p));
    // No silent pass: a checkout without the design beside it fails here, naming where it looked.
    assert.ok(design, `DESIGN.md not found (set TETHER_DESIGN_MD); looked in ${places.join(', ')}`);
    const text = readFileSync(design, 'utf8');
    const start = text.indexOf('Errors are always');
    const rest = text.slice(start, text.indexOf('Never a stack trace', start)).replace(/\s+/g, ' ');
    const listed = new Map<string, number>();
    for (const m of rest.matchAll(/(\d{3}) ((?:`[a-z_]+`(?: \| )?)+)/g)) {
      for (const c of (m[2] as string).matchAll(/`([a-z_]+)`/g)) listed.set(c[1] as string, Number(m[1]));
    }
    assert.ok(listed.size >= 14, `parsed ${listed.size} codes`);
    for (const [code, status] of listed) assert.equal(ERROR_STATUS[code as keyof typeof ERROR_STATUS], status, code);
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

describe('toTetherError()', () => {
  it('passes a TetherError through as it is', () => {
    const e = new TetherError('unavailable', 'queue full', { retryAfter: 2 });
    assert.equal(toTetherError(e, 'id-1'), e);
    const field = invalidRequest('statements[0].value', 'must be a number');
    assert.equal(toTetherError(field, 'id-1'), field);
  });

  it('answers anything else with 500 internal naming the id, never its message', () => {
    const secret = new Error('password=hunter2 at /srv/db');
    const e = toTetherError(secret, 'f00d');
    assert.equal(e.status, 500);
    assert.equal(e.code, 'internal');
    assert.deepEqual(e.toBody(), {
      error: { code: 'internal', message: 'internal error; quote id f00d to the operator' },
    });
    assert.equal(e.cause, secret, 'kept for the log line');
    assert.doesNotMatch(JSON.stringify(e.toBody()), /hunter2|\/srv|at /);
    for (const odd of [null, undefined, 'text', 42, { message: 'x' }]) {
      assert.equal(toTetherError(odd, 'f00d').status, 500, String(odd));
    }
  });

  it('answers what a body parser refused with 400 naming body, or 413', () => {
    const parser = (code: string, statusCode: number, message = 'm') =>
      Object.assign(new Error(message), { code, statusCode });
    const json = toTetherError(parser('FST_ERR_CTP_INVALID_JSON_BODY', 400, 'Unexpected end'), 'x');
    assert.deepEqual([json.status, json.field, json.message], [400, 'body', 'body: Unexpected end']);
    assert.equal(toTetherError(parser('FST_ERR_CTP_EMPTY_JSON_BODY', 400), 'x').message, 'body: must not be empty');
    assert.equal(toTetherError(parser('FST_ERR_CTP_INVALID_MEDIA_TYPE', 415), 'x').field, 'body');
    assert.equal(toTetherError(parser('FST_ERR_CTP_BODY_TOO_LARGE', 413), 'x').code, 'too_large');
    assert.equal(toTetherError(new SyntaxError('Unexpected token'), 'x').message, 'body: malformed JSON');
    assert.equal(toTetherError(Object.assign(new Error('too big'), { statusCode: 413 }), 'x').status, 413);
    const other = toTetherError(Object.assign(new Error('bad range'), { statusCode: 416 }), 'x');
    assert.deepEqual([other.status, other.message], [400, 'bad range']);
  });
});
