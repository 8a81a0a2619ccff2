import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { banner } from '../../src/cli/banner.ts';

describe('banner', () => {
  it('lists URLs, the key and token files, the console, and a curl line per loaded service', () => {
    const text = banner('Tether is up.', {
      memoryUrl: 'http://127.0.0.1:8080',
      adminKeyFile: '/d/memory/admin.key',
      gatewayUrl: 'http://127.0.0.1:8081',
      adminUrl: 'http://127.0.0.1:8082',
      adminTokenFile: '/d/gateway/admin.token',
      consoleUrl: 'http://127.0.0.1:8080/console/',
      services: [{ name: 'shop', namespace: 'team-a', cookieName: 'sid' }],
      domain: 'local.test',
    });
    assert.match(text, /^\nTether is up\.\n/);
    assert.match(text, /memory server +http:\/\/127\.0\.0\.1:8080 +\(admin key: \/d\/memory\/admin\.key\)/);
    assert.match(
      text,
      /session gateway http:\/\/127\.0\.0\.1:8081 +admin http:\/\/127\.0\.0\.1:8082\/_tether\/sessions/,
    );
    assert.match(text, /web console +http:\/\/127\.0\.0\.1:8080\/console\//);
    assert.match(
      text,
      /curl -s -H "Authorization: Bearer \$\(cat \/d\/memory\/admin\.key\)" http:\/\/127\.0\.0\.1:8080\/v1\/whoami/,
    );
    assert.match(
      text,
      /curl -s -H 'Host: shop\.team-a\.local\.test' -H 'Cookie: sid=alice' http:\/\/127\.0\.0\.1:8081\//,
    );
    assert.match(
      text,
      /curl -s -H "Authorization: Bearer \$\(cat \/d\/gateway\/admin\.token\)" http:\/\/127\.0\.0\.1:8082\/_tether\/sessions/,
    );
    assert.doesNotMatch(text, /memory-agent|ai-agent/, 'only the services actually loaded');
  });

  it('shows only what a lone memory server has, and the env key when there is no key file', () => {
    const text = banner('Tether memory server is up.', {
      memoryUrl: 'http://127.0.0.1:8080',
      adminKeyFile: null,
      consoleUrl: 'http://127.0.0.1:8080/console/',
    });
    assert.match(text, /admin key: from TETHER_ADMIN_KEY/);
    assert.match(text, /Bearer \$TETHER_ADMIN_KEY/);
    assert.doesNotMatch(text, /gateway|_tether/);
  });
});
