import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { claimNamer, MAX_CLAIM_NAME } from '../../src/sessions/claim-name.ts';

/** A DNS-1123 label: what Kubernetes accepts as a SandboxClaim (and pod, service) name. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const SECRET = 'a'.repeat(64);

describe('claimNamer()', () => {
  it('is <service>-<32 hex>, stable for one key and different for another', () => {
    const name = claimNamer(SECRET);
    const a = name('ai-agent-pause', '11');
    assert.match(a, /^ai-agent-pause-[0-9a-f]{32}$/);
    assert.equal(name('ai-agent-pause', '11'), a);
    assert.notEqual(name('ai-agent-pause', '22'), a);
    assert.match(name('ai-agent-delete', '11'), /^ai-agent-delete-/);
    assert.notEqual(name('ai-agent-delete', '11').slice(-32), a.slice(-32));
  });

  it('depends on the secret, and is not the old unkeyed sha256 name', () => {
    const a = claimNamer(SECRET)('memory-agent', 'rt-1377755');
    const b = claimNamer('b'.repeat(64))('memory-agent', 'rt-1377755');
    assert.notEqual(a, b);
    const unkeyed = createHash('sha256').update('rt-1377755').digest('hex');
    assert.ok(!a.endsWith(unkeyed.slice(0, 32)));
    assert.ok(!a.includes(unkeyed.slice(0, 10)));
  });

  it('keeps the two session keys the 40-bit names shared apart', () => {
    // rt-1377755 and rt-1499321 had the same `memory-agent-<10 hex of sha256>` name: one agent's memory.
    const old = (k: string) => createHash('sha256').update(k).digest('hex').slice(0, 10);
    assert.equal(old('rt-1377755'), old('rt-1499321'));
    const name = claimNamer(randomBytes(32));
    assert.notEqual(name('memory-agent', 'rt-1377755'), name('memory-agent', 'rt-1499321'));
  });

  it('gives a DNS-1123 label of at most 63 characters for the longest service names, cut deterministically', () => {
    const name = claimNamer(SECRET);
    const long = `a${'-b'.repeat(31)}`; // 63 characters, a valid Knative name
    const cutAtDash = `${'x'.repeat(29)}-${'y'.repeat(20)}`; // the cut at 30 would end with '-'
    for (const service of [long, cutAtDash, 'x'.repeat(63), 'a', 'ai-agent-pause']) {
      const n = name(service, 'some-key');
      assert.ok(n.length <= MAX_CLAIM_NAME, `${n} is ${n.length} long`);
      assert.match(n, DNS_LABEL);
      assert.equal(name(service, 'some-key'), n);
    }
    assert.equal(name(cutAtDash, 'k').split('-')[0], 'x'.repeat(29));
    // Two long services with one prefix: the same cut, different names.
    const p = 'p'.repeat(40);
    assert.notEqual(name(`${p}-one`, 'k'), name(`${p}-two`, 'k'));
  });

  it('separates service and key (no ambiguity between the two parts)', () => {
    const name = claimNamer(SECRET);
    assert.notEqual(name('ab', 'c').slice(-32), name('a', 'bc').slice(-32));
  });

  it('refuses a secret shorter than 128 bits', () => {
    assert.throws(() => claimNamer('short'), /at least 16 bytes: got 5/);
    assert.throws(() => claimNamer(Buffer.alloc(15)), /got 15/);
  });
});
