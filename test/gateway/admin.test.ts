import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { send, serviceYaml, startTestGateway } from './helpers/harness.ts';

const YAML = serviceYaml('adm', { 'serving.knative.dev/session-affinity-cookie': 'app' });
const HOST = 'adm.default.example.com';

describe('admin API with adminToken', () => {
  it('answers 401 JSON without the bearer token and serves the sessions with it', async (t) => {
    const gw = await startTestGateway(t, YAML, { adminToken: 's3cret-token' });
    assert.equal((await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=k1' } })).status, 200);
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: 's3cret-token' },
    ];
    for (const headers of attempts) {
      for (const path of ['/_tether/sessions', '/_tether/instances', '/metrics']) {
        const r = await send(gw.adminUrl, { path, headers });
        assert.equal(r.status, 401, `${path} with ${JSON.stringify(headers)}`);
        assert.match(String(r.headers['content-type']), /application\/json/);
        assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'unauthenticated');
        assert.doesNotMatch(r.body, /k1/);
      }
    }
    const ok = await send(gw.adminUrl, {
      path: '/_tether/sessions',
      headers: { authorization: 'Bearer s3cret-token' },
    });
    assert.equal(ok.status, 200);
    assert.deepEqual(
      (JSON.parse(ok.body) as Array<{ key: string }>).map((s) => s.key),
      ['k1'],
    );
  });

  it('needs no token when none is set', async (t) => {
    const gw = await startTestGateway(t, YAML);
    assert.equal((await send(gw.adminUrl, { path: '/_tether/sessions' })).status, 200);
  });
});
