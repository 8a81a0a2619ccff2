import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claimName } from '../../src/sessions/claim-name.ts';

describe('claimName()', () => {
  it('is <service>-<10 hex>, stable for one key and different for another', () => {
    const a = claimName('ai-agent-pause', '11');
    assert.match(a, /^ai-agent-pause-[0-9a-f]{10}$/);
    assert.equal(claimName('ai-agent-pause', '11'), a);
    assert.notEqual(claimName('ai-agent-pause', '22'), a);
    assert.match(claimName('ai-agent-delete', '11'), /^ai-agent-delete-/);
  });
});
