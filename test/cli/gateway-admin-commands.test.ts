/**
 * `tether logs`: `-n/--lines` as docs/cli.md's exit-code table wants it (a bad value is a usage error, exit 2).
 * Listing sessions and instances is covered by client-commands.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { send, serviceYaml, startTestGateway } from '../gateway/helpers/harness.ts';
import { runTether } from '../helpers/tether-cli.ts';

describe('tether logs -n', () => {
  for (const bad of ['abc', '-3', '1.5', '']) {
    it(`refuses '${bad}' as a usage error (exit 2) without asking the gateway`, async () => {
      // Port 9 on loopback (discard): nothing listens, so only a check made before any request exits 2.
      const run = await runTether(['logs', 'some-instance', '-n', bad], {
        TETHER_GATEWAY_ADMIN_URL: 'http://127.0.0.1:9',
        TETHER_GATEWAY_ADMIN_TOKEN: 'unused',
      });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /-n\/--lines: must be an integer >= 0/);
      assert.equal(run.stdout, '');
    });
  }

  it('prints the last n lines; 0 prints none', async (t) => {
    const gw = await startTestGateway(
      t,
      serviceYaml('logs-app', { 'serving.knative.dev/session-affinity-cookie': 'app' }),
      {
        adminToken: 'secret-admin-token',
      },
    );
    const r = await send(gw.publicUrl, { host: 'logs-app.default.example.com', headers: { cookie: 'app=one' } });
    assert.equal(r.status, 200);
    const env = { TETHER_GATEWAY_ADMIN_URL: gw.adminUrl, TETHER_GATEWAY_ADMIN_TOKEN: 'secret-admin-token' };
    const [instance] = JSON.parse((await runTether(['instances', '--json'], env)).stdout) as { name: string }[];
    assert.ok(instance);
    const all = await runTether(['logs', instance.name], env);
    assert.equal(all.code, 0, all.stderr);
    assert.ok(all.stdout.length > 0, 'the app wrote at least one line');
    const none = await runTether(['logs', instance.name, '-n', '0'], env);
    assert.deepEqual([none.code, none.stdout], [0, '']);
    const one = await runTether(['logs', instance.name, '--lines', '1'], env);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(one.stdout, `${all.stdout.trimEnd().split('\n').at(-1)}\n`);
  });
});
