import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createProgress } from '../../src/cli/progress.ts';

function fakeStream(isTTY: boolean) {
  const out: string[] = [];
  return { out, stream: { isTTY, write: (text: string) => out.push(text) } };
}

describe('createProgress', () => {
  it('prints nothing for work shorter than 2 s when stderr is not a terminal', () => {
    let t = 1000;
    const { out, stream } = fakeStream(false);
    const p = createProgress({ label: 'export', unit: 'events', stream, now: () => t });
    p.tick(10);
    t += 1999;
    p.tick(10);
    p.done();
    assert.deepEqual(out, []);
    assert.equal(p.count, 20);
  });

  it('prints each figure once, every 2 s, on a plain stream, and nothing again at done', () => {
    let t = 0;
    const { out, stream } = fakeStream(false);
    const p = createProgress({ label: 'export', unit: 'events', stream, now: () => t });
    t = 2000;
    p.tick(100);
    t = 2500;
    p.tick(100);
    t = 4100;
    p.tick(100);
    p.done();
    assert.deepEqual(out, ['export 100 events 50/s\n', 'export 300 events 73/s\n']);
  });

  it('redraws one line on a terminal and ends it at done with the final figure', () => {
    let t = 0;
    const { out, stream } = fakeStream(true);
    const p = createProgress({ label: 'import', total: 200, unit: 'bytes', stream, now: () => t });
    t = 1000;
    p.tick(100);
    t = 1050;
    p.tick(100);
    p.done();
    assert.equal(out.length, 2);
    const erase = '\x1b[K';
    assert.equal(out[0], `\rimport [${'#'.repeat(15)}${'-'.repeat(15)}] 50.0% 100/200 bytes 100/s${erase}`);
    assert.equal(out[1], `\rimport [${'#'.repeat(30)}] 100.0% 200/200 bytes 190/s${erase}\n`);
  });
});
