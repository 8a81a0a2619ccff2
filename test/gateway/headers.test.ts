import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { HOP_BY_HOP, requestHeaders, responseHeaders, scanRequestHeaders } from '../../src/gateway/proxy/headers.ts';
import {
  readCookie,
  resolveSessionKey,
  sessionCookie,
  sessionKeyFrom,
  sessionKeyPolicy,
} from '../../src/gateway/session-key.ts';

function fakeReq(raw: string[], remoteAddress = '10.1.2.3'): IncomingMessage {
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) headers[(raw[i] as string).toLowerCase()] = raw[i + 1] as string;
  return { rawHeaders: raw, headers, socket: { remoteAddress } } as unknown as IncomingMessage;
}

function pairs(raw: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i] as string, raw[i + 1] as string]);
  return out;
}

describe('requestHeaders()', () => {
  it('strips hop-by-hop and Connection-listed headers, keeps the rest in order and appends X-Forwarded-*', () => {
    const req = fakeReq([
      'Host',
      'a.default.example.com',
      'Connection',
      'keep-alive, X-Secret-Hop',
      'Keep-Alive',
      'timeout=5',
      'X-Secret-Hop',
      '1',
      'TE',
      'trailers',
      'Cookie',
      'app=11; x=2',
      'X-Forwarded-For',
      '1.1.1.1',
      'Accept',
      '*/*',
    ]);
    assert.deepEqual(pairs(requestHeaders(req, false)), [
      ['Host', 'a.default.example.com'],
      ['Cookie', 'app=11; x=2'],
      ['Accept', '*/*'],
      ['X-Forwarded-For', '1.1.1.1, 10.1.2.3'],
      ['X-Forwarded-Proto', 'http'],
      ['X-Forwarded-Host', 'a.default.example.com'],
    ]);
  });

  it('keeps the upgrade handshake for WebSockets', () => {
    const req = fakeReq(['Host', 'h', 'Connection', 'Upgrade', 'Upgrade', 'websocket', 'Sec-WebSocket-Key', 'k']);
    const out = pairs(requestHeaders(req, true));
    assert.deepEqual(out.slice(-2), [
      ['Connection', 'Upgrade'],
      ['Upgrade', 'websocket'],
    ]);
    assert.ok(out.some(([k]) => k === 'Sec-WebSocket-Key'));
  });

  it('the hop-by-hop set is frozen', () => {
    assert.ok(Object.isFrozen(HOP_BY_HOP));
    assert.ok(HOP_BY_HOP.has('transfer-encoding'));
  });
});

describe('scanRequestHeaders()', () => {
  it('reads the headers the raw path acts on in any case, joins Cookie headers, keeps the first Host and counts them', () => {
    const scan = scanRequestHeaders([
      'HOST',
      'a.default.example.com',
      'host',
      'b.example.com',
      'cookie',
      'a=1',
      'Cookie',
      'app=2',
      'X-Session-Key',
      'k',
      'Authorization',
      'Bearer t',
      'Content-Length',
      '3',
      'Expect',
      '100-continue',
      'Accept',
      '*/*',
    ]);
    assert.deepEqual(scan, {
      host: 'a.default.example.com',
      hosts: 2,
      cookie: 'a=1; app=2',
      sessionKey: 'k',
      authorization: 'Bearer t',
      connection: undefined,
      length: true,
      chunked: false,
      transferEncoding: undefined,
      expect: true,
      forwardedProto: undefined,
      forwardedFor: undefined,
    });
    assert.equal(scanRequestHeaders(['Transfer-Encoding', 'chunked']).chunked, true);
    const xff = scanRequestHeaders(['X-Forwarded-For', '198.51.100.1', 'x-forwarded-for', '10.0.0.2']);
    assert.equal(xff.forwardedFor, '198.51.100.1, 10.0.0.2');
    const te = scanRequestHeaders(['Transfer-Encoding', 'gzip', 'transfer-encoding', 'chunked']);
    assert.equal(te.transferEncoding, 'gzip, chunked');
  });
});

describe('responseHeaders()', () => {
  it("drops hop-by-hop headers and adds the new session cookie after the instance's own", () => {
    const out = responseHeaders(
      ['Content-Type', 'text/plain', 'Transfer-Encoding', 'chunked', 'Set-Cookie', 'a=1', 'Connection', 'keep-alive'],
      'app=new; Path=/; HttpOnly',
    );
    assert.deepEqual(pairs(out), [
      ['Content-Type', 'text/plain'],
      ['Set-Cookie', 'a=1'],
      ['Set-Cookie', 'app=new; Path=/; HttpOnly'],
    ]);
  });
});

describe('session keys', () => {
  it('readCookie() finds one cookie among several, with spaces and quotes, and not by prefix', () => {
    assert.equal(readCookie('a=1; app=11; b=2', 'app'), '11');
    assert.equal(readCookie('apple=9;app="q q"', 'app'), 'q q');
    assert.equal(readCookie('apple=9', 'app'), undefined);
    assert.equal(readCookie('app=', 'app'), undefined);
    assert.equal(readCookie(undefined, 'app'), undefined);
  });

  it('sessionKeyFrom() prefers the cookie, then X-Session-Key, then a hash of Authorization', () => {
    const sessionKeyOf = (h: Record<string, string>, name: string) =>
      sessionKeyFrom(h.cookie, h['x-session-key'], h.authorization, name);
    assert.equal(sessionKeyOf({ cookie: 'app=c', 'x-session-key': 'h' }, 'app'), 'c');
    assert.equal(sessionKeyOf({ 'x-session-key': 'h' }, 'app'), 'h');
    const a = sessionKeyOf({ authorization: 'Bearer t1' }, 'app');
    assert.match(a ?? '', /^auth-[0-9a-f]{32}$/);
    assert.equal(sessionKeyOf({ authorization: 'Bearer t1' }, 'app'), a);
    assert.notEqual(sessionKeyOf({ authorization: 'Bearer t2' }, 'app'), a);
    assert.equal(sessionKeyOf({}, 'app'), undefined);
  });

  it('resolveSessionKey() shares one key without affinity, keeps a carried one and makes a new signed one', () => {
    const policy = sessionKeyPolicy();
    const svc = { affinity: true, cookieName: 'app', signedSessionKeys: null };
    assert.deepEqual(resolveSessionKey({ ...svc, affinity: false }, policy, 'app=c', undefined, undefined), {
      key: '-',
      fresh: false,
    });
    assert.deepEqual(resolveSessionKey(svc, policy, 'app=c', undefined, undefined), { key: 'c', fresh: false });
    const fresh = resolveSessionKey(svc, policy, undefined, undefined, undefined);
    assert.equal(fresh.fresh, true);
    assert.ok(policy.signer.verify(fresh.key));
  });

  it('sessionCookie() is HttpOnly with Path=/', () => {
    assert.equal(sessionCookie('app', 'k'), 'app=k; Path=/; HttpOnly; SameSite=Lax');
  });
});
