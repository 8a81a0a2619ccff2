import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { send, serviceYaml, startTestGateway } from './helpers/harness.ts';

describe('GET /console/ on the gateway admin port', () => {
  it('serves the console without the admin token (its calls carry it) and says it has only the gateway', async (t) => {
    const gw = await startTestGateway(t, serviceYaml('con', {}), { adminToken: 'tok' });
    const page = await send(gw.adminUrl, { path: '/console/' });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
    const config = await send(gw.adminUrl, { path: '/console/config.json' });
    assert.deepEqual(JSON.parse(config.body), { memory: null, gateway: '' });
    assert.equal((await send(gw.adminUrl, { path: '/console' })).status, 302);
    const missing = await send(gw.adminUrl, { path: '/console/secret.txt' });
    assert.equal(missing.status, 404);
    assert.equal((await send(gw.adminUrl, { path: '/_tether/sessions' })).status, 401);
  });
});
