import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { notFound } from '../../../src/common/errors.ts';
import type { Logger } from '../../../src/common/log.ts';
import { clientSafeError, errorResponse } from '../../../src/gateway/proxy/respond.ts';

/** A logger that keeps what `error` was given. */
function recordingLog() {
  const errors: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  const log = { error: (obj: Record<string, unknown>, msg: string) => errors.push({ obj, msg }) } as unknown as Logger;
  return { log, errors };
}

describe('clientSafeError()', () => {
  it('passes a TetherError through and logs nothing', () => {
    const { log, errors } = recordingLog();
    const e = notFound('instance x');
    assert.equal(clientSafeError(e, log), e);
    assert.equal(errors.length, 0);
  });

  it('answers an unknown error with 500 naming an id, and logs the error with that id', () => {
    const { log, errors } = recordingLog();
    const bug = new Error('token=abc123 leaked');
    const e = clientSafeError(bug, log);
    assert.equal(e.status, 500);
    const id = /^internal error; quote id ([0-9a-f-]{36}) to the operator$/.exec(e.message)?.[1];
    assert.ok(id, e.message);
    assert.deepEqual(errors, [{ obj: { err: bug, errorId: id }, msg: 'gateway request failed' }]);
    const wire = errorResponse(e, true);
    assert.match(wire, /^HTTP\/1\.1 500 internal\r\n/);
    assert.doesNotMatch(wire, /abc123/);
  });
});
