import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readCookie, sessionKeyFrom } from '../../src/gateway/session-key.ts';

describe('readCookie()', () => {
  const cases: Array<[header: string | undefined, expected: string | undefined]> = [
    [undefined, undefined],
    ['', undefined],
    ['tether-session=abc', 'abc'],
    ['a=1; tether-session=abc', 'abc'],
    ['a=1;tether-session=abc; b=2', 'abc'],
    ['flag; tether-session=abc', 'abc'],
    ['a=1; flag; tether-session=abc', 'abc'],
    ['flag;tether-session=abc', 'abc'],
    ['flag', undefined],
    ['a=1; flag', undefined],
    ['tether-session', undefined],
    ['tether-session; x=tether-session=no', undefined],
    ['\ttether-session=abc', 'abc'],
    ['a=1;\ttether-session=abc', 'abc'],
    ['a=1; \t tether-session = abc ', 'abc'],
    ['tether-session="quoted"', 'quoted'],
    ['tether-session=; other=1', undefined],
    ['xtether-session=no; tether-session=yes', 'yes'],
    ['tether-session-x=no; tether-session=yes', 'yes'],
    ['; ; tether-session=abc', 'abc'],
    ['a=b=c; tether-session=abc', 'abc'],
  ];
  for (const [header, expected] of cases) {
    it(`reads ${JSON.stringify(expected)} from ${JSON.stringify(header)}`, () => {
      assert.equal(readCookie(header, 'tether-session'), expected);
    });
  }
});

describe('sessionKeyFrom()', () => {
  it('finds the affinity cookie behind a cookie without a value', () => {
    assert.equal(sessionKeyFrom('a=1; flag; app=k1', undefined, undefined, 'app'), 'k1');
  });
});
