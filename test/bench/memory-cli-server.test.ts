/**
 * bench:memory --baseline starts each side's `tether memory` from its checkout: this tree's through bin/tether
 * (its URL, admin key, /proc memory, a clean stop), and a checkout without bin/tether through its
 * src/cli/main.ts, whose URL and key file may come from the banner alone (a checkout that logs no listening line).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { isRunnableCheckout, startCliServer } from '../../bench/lib/memory-cli-server.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'tether-cli-server-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A stand-in checkout: src/cli/main.ts prints only a banner, serves whoami with a 200, stops on SIGTERM. */
function bannerOnlyCheckout(): string {
  const dir = join(tmp, 'old');
  mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(
    join(dir, 'src', 'cli', 'main.ts'),
    `import { createServer } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const data = process.argv[process.argv.indexOf('--data') + 1] as string;
mkdirSync(data, { recursive: true });
writeFileSync(join(data, 'admin.key'), 'old-key\\n');
const server = createServer((_req, res) => res.end('{}')).listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(\`\\nTether memory server listening\\n\\n  memory server   http://127.0.0.1:\${port}   (admin key: \${join(data, 'admin.key')})\\n\`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`,
  );
  return dir;
}

describe('startCliServer', () => {
  it("starts this tree's tether memory, answers with its admin key, and stops", async () => {
    assert.ok(isRunnableCheckout(ROOT));
    const server = await startCliServer({ checkout: ROOT, dataDir: join(tmp, 'this'), label: 'this' });
    try {
      const res = await fetch(`${server.url}/v1/whoami`, { headers: { authorization: `Bearer ${server.adminKey}` } });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { admin: boolean }).admin, true);
      const mem = server.memory();
      assert.ok(mem.rss > 0 && mem.peak >= mem.rss, 'memory read from /proc');
      assert.ok(server.cpuMicros() > 0);
    } finally {
      await server.stop();
    }
    assert.throws(() => server.memory(), 'the process is gone');
  });

  it('starts a checkout without bin/tether through src/cli/main.ts, from its banner', async () => {
    const dir = bannerOnlyCheckout();
    assert.ok(isRunnableCheckout(dir));
    assert.ok(!isRunnableCheckout(join(tmp, 'nothing')));
    const server = await startCliServer({ checkout: dir, dataDir: join(tmp, 'old-data'), label: 'old' });
    try {
      assert.equal(server.adminKey, 'old-key');
      assert.equal((await fetch(`${server.url}/v1/whoami`)).status, 200);
    } finally {
      await server.stop();
    }
  });
});
