/**
 * The driver table (src/cli/drivers.ts), the one place drivers are picked: each flag and environment value
 * picks its driver (real SQLite, PostgreSQL, Redis, local processes and the Kubernetes API double), and a bad
 * value is refused with the message (and, for usage errors, the exit code 2) the commands gave before the table.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CliError, EXIT } from '../../src/cli/api-client.ts';
import {
  DRIVERS,
  localPlatformDrivers,
  parseIsolation,
  parseRuntimeKind,
  pickIsolation,
  pickRuntime,
  pickSessionStore,
  pickStore,
  type RuntimeFlags,
} from '../../src/cli/drivers.ts';
import { systemClock } from '../../src/common/clock.ts';
import { silentLogger } from '../../src/common/log.ts';
import { KubernetesRuntime } from '../../src/runtime/kubernetes/kubernetes-runtime.ts';
import type { HostCapabilities } from '../../src/runtime/local/isolation/host-probe.ts';
import { LocalRuntime } from '../../src/runtime/local/local-runtime.ts';
import { MemorySessionStore } from '../../src/sessions/memory-store.ts';
import { RedisSessionStore } from '../../src/sessions/redis/redis-store.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { serviceYaml } from '../gateway/helpers/harness.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { startRedis } from '../helpers/redis.ts';
import { startKubeDouble } from '../kube/double.ts';
import { kubeServiceYaml } from '../runtime/kubernetes/helpers.ts';

const log = silentLogger();
const root = mkdtempSync(join(tmpdir(), 'tether-drivers-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(root, `d${n++}`);

/** A usage error: CliError, exit 2, this message. */
const usageError = (message: RegExp) => (err: unknown) => {
  assert.ok(err instanceof CliError, String(err));
  assert.equal(err.exitCode, EXIT.usage);
  assert.match(err.message, message);
  return true;
};

describe('the driver table', () => {
  it('lists every port with the kinds and defaults the commands offer', () => {
    assert.deepEqual(DRIVERS.store.kinds, ['sqlite', 'postgres']);
    assert.equal(DRIVERS.store.default, 'sqlite');
    assert.equal(DRIVERS.store.env, 'TETHER_STORE');
    assert.deepEqual(DRIVERS.sessionStore.kinds, ['memory', 'redis']);
    assert.equal(DRIVERS.sessionStore.default, 'memory');
    assert.deepEqual(DRIVERS.runtime.kinds, ['local', 'kubernetes']);
    assert.equal(DRIVERS.runtime.default, 'local');
    assert.deepEqual(DRIVERS.isolation.kinds, ['auto', 'namespaces', 'none']);
    assert.deepEqual(DRIVERS.isolation.default, { gateway: 'none', up: 'auto' });
  });
});

describe('pickStore (--store, --postgres-url, --pool-size)', () => {
  const flags = { poolSize: '10' };

  it('--store sqlite opens SQLite in --data, after taking the folder', async (t) => {
    const data = fresh();
    const { store, dataLock } = await pickStore({ ...flags, store: 'sqlite', data }, log);
    t.after(async () => {
      await store.close();
      dataLock?.release();
    });
    assert.ok(store instanceof SqliteStore);
    assert.equal(store.kind, 'sqlite');
    assert.ok(existsSync(join(data, 'tether.db')));
    assert.equal(dataLock?.path, join(data, 'server.pid'));
    // Given the engine's fold module: whole as_of folds run in its read workers, and answer there.
    const folds = store.offLoopFolds?.();
    assert.ok(folds, 'the SQLite store the CLI opens folds off the loop');
    const answer = await folds.foldFactLogs({
      namespace: 'agents:drivers',
      groups: [{ subject: 'user', predicate: 'note' }],
      asOf: Date.now(),
      max: 100,
      cardinalities: { note: 'multi' },
      terms: null,
      limit: 10,
    });
    assert.deepEqual(answer, { capped: false, beliefs: [] });
    // One server per data folder: a second one is refused before it opens the file.
    await assert.rejects(
      pickStore({ ...flags, store: 'sqlite', data }, log),
      new RegExp(`another memory server \\(pid ${process.pid}\\)`),
    );
  });

  it('--store postgres opens PostgreSQL at --postgres-url with no lock on --data', async (t) => {
    const pg = await startPostgres();
    t.after(() => pg.stop());
    const url = await pg.createDatabase();
    const data = fresh();
    const { store, dataLock } = await pickStore({ store: 'postgres', postgresUrl: url, poolSize: '2', data }, log);
    t.after(() => store.close());
    assert.ok(store instanceof PostgresStore);
    assert.equal(store.kind, 'postgres');
    assert.equal(dataLock, null);
    assert.ok(!existsSync(join(data, 'server.pid')));
  });

  it('refuses an unknown store, naming it', async () => {
    await assert.rejects(
      pickStore({ ...flags, store: 'mysql', data: fresh() }, log),
      /--store must be sqlite or postgres: got mysql/,
    );
  });

  it('refuses --store postgres without a URL', async () => {
    await assert.rejects(
      pickStore({ ...flags, store: 'postgres', data: fresh() }, log),
      /--store postgres needs --postgres-url \(or TETHER_POSTGRES_URL\)/,
    );
  });

  it('refuses a pool size out of range', async () => {
    const pg = { store: 'postgres', postgresUrl: 'postgres://u:p@127.0.0.1:1/db', data: fresh() };
    await assert.rejects(pickStore({ ...pg, poolSize: '1' }, log), /--pool-size must be an integer 2\.\.1000: got 1/);
    await assert.rejects(pickStore({ ...pg, poolSize: 'x' }, log), /--pool-size must be an integer 2\.\.1000: got x/);
  });

  it('refuses a URL that is not postgres://, with the password masked', async () => {
    await assert.rejects(
      pickStore({ ...flags, store: 'postgres', postgresUrl: 'mysql://me:topsecret@h/db', data: fresh() }, log),
      (err: Error) => {
        assert.match(err.message, /must start with postgres:\/\//);
        assert.ok(!err.message.includes('topsecret'));
        return true;
      },
    );
  });
});

describe('pickSessionStore (--session-store, --redis-url, TETHER_REDIS_URL, --redis-prefix)', () => {
  const none = {} as NodeJS.ProcessEnv;

  it('--session-store memory builds the memory store', async () => {
    const store = pickSessionStore({ sessionStore: 'memory', redisPrefix: 'tether:' }, log, { env: none });
    assert.ok(store instanceof MemorySessionStore);
    assert.equal(store.durable, false);
    await store.close();
  });

  it('--session-store redis builds the Redis store from --redis-url, else TETHER_REDIS_URL', async (t) => {
    const redis = await startRedis({ after: (fn) => t.after(fn) });
    for (const [flags, env] of [
      [{ redisUrl: redis.url }, none],
      [{}, { TETHER_REDIS_URL: redis.url }],
    ] as const) {
      const store = pickSessionStore({ sessionStore: 'redis', redisPrefix: 'drivers:', ...flags }, log, { env });
      assert.ok(store instanceof RedisSessionStore);
      assert.equal(store.durable, true);
      await store.ready();
      await store.close();
    }
  });

  it('refuses an unknown kind, naming it', () => {
    assert.throws(
      () => pickSessionStore({ sessionStore: 'etcd', redisPrefix: 'tether:' }, log, { env: none }),
      /--session-store: must be 'memory' or 'redis', got 'etcd'/,
    );
  });

  it('refuses redis without a URL', () => {
    assert.throws(
      () => pickSessionStore({ sessionStore: 'redis', redisPrefix: 'tether:' }, log, { env: none }),
      /--session-store redis needs --redis-url redis:\/\/\[user:pass@\]host:port\/db \(or TETHER_REDIS_URL\)/,
    );
  });

  it('refuses a bad prefix', () => {
    const flags = { sessionStore: 'redis', redisUrl: 'redis://127.0.0.1:1/0', redisPrefix: 'a b' };
    assert.throws(
      () => pickSessionStore(flags, log, { env: none }),
      /--redis-prefix: 1-64 of \[A-Za-z0-9_.:-\], got 'a b'/,
    );
  });

  it('refuses a bad URL without showing its password', () => {
    const flags = { sessionStore: 'redis', redisUrl: 'http://me:topsecret@127.0.0.1:1', redisPrefix: 'tether:' };
    assert.throws(
      () => pickSessionStore(flags, log, { env: none }),
      (err: Error) => {
        assert.match(err.message, /^--redis-url/);
        assert.ok(!err.message.includes('topsecret'));
        return true;
      },
    );
  });
});

describe('parseIsolation and pickIsolation (--isolation)', () => {
  const caps: HostCapabilities = {
    tools: {} as HostCapabilities['tools'],
    root: false,
    userNamespaces: false,
    cgroups: undefined,
    forwarding: false,
  };
  const base = { why: 'test', hidden: [], dir: fresh(), log, caps };

  it('accepts auto, namespaces and none', () => {
    for (const mode of DRIVERS.isolation.kinds) assert.equal(parseIsolation(mode), mode);
  });

  it('refuses another mode with exit 2', () => {
    assert.throws(
      () => parseIsolation('gvisor'),
      usageError(/--isolation must be one of auto, namespaces, none: got 'gvisor'/),
    );
  });

  it('none and auto without bubblewrap give plain processes; namespaces without it is refused', async () => {
    assert.equal(await pickIsolation({ ...base, requested: 'none' }), undefined);
    assert.equal(await pickIsolation({ ...base, requested: 'auto' }), undefined);
    await assert.rejects(
      pickIsolation({ ...base, requested: 'namespaces' }),
      /--isolation namespaces is impossible here: bubblewrap \(bwrap\) is not installed/,
    );
  });
});

describe('pickRuntime (--runtime and its Kubernetes flags)', () => {
  const kubeFlags = {
    namespace: 'agents',
    audience: 'tether',
    sandboxServiceAccount: 'tether-sandbox',
    memoryNamespace: 'tether',
    kubernetesTimeout: '5s',
  };
  let manifests: string;
  before(() => {
    manifests = fresh();
    writeFileSync(manifests, serviceYaml('agent', {}));
  });

  it('refuses another runtime with exit 2', () => {
    assert.throws(
      () => parseRuntimeKind('docker'),
      usageError(/--runtime: must be 'local' or 'kubernetes', got 'docker'/),
    );
  });

  it('--runtime local runs processes, with the services of --services', async () => {
    const flags: RuntimeFlags = { runtime: 'local', services: manifests, stateDir: fresh(), ...kubeFlags };
    const setup = await pickRuntime(flags, { log, clock: systemClock });
    try {
      assert.equal(setup.kind, 'local');
      assert.ok(setup.runtime instanceof LocalRuntime);
      assert.deepEqual(
        setup.services.map((s) => s.name),
        ['agent'],
      );
      assert.deepEqual(
        (await setup.reloadServices()).map((s) => s.name),
        ['agent'],
      );
    } finally {
      await setup.runtime.close();
    }
  });

  it('--runtime kubernetes claims sandboxes through the API server of --kubeconfig, with no warm pool of its own', async (t) => {
    const kube = await startKubeDouble();
    t.after(() => kube.close());
    const file = fresh();
    writeFileSync(file, kubeServiceYaml('agent', { 'serving.knative.dev/warm-pool': '2' }));
    const flags: RuntimeFlags = {
      runtime: 'kubernetes',
      services: file,
      kubeconfig: kube.gatewayKubeconfigPath,
      ...kubeFlags,
    };
    const setup = await pickRuntime(flags, { log, clock: systemClock });
    try {
      assert.equal(setup.kind, 'kubernetes');
      assert.ok(setup.runtime instanceof KubernetesRuntime);
      assert.deepEqual(
        setup.services.map((s) => [s.name, s.warmPool]),
        [['agent', 0]],
      );
    } finally {
      await setup.runtime.close();
    }
  });

  it('refuses a bad --kubernetes-timeout or --namespace before reading anything', async () => {
    const flags: RuntimeFlags = { runtime: 'kubernetes', services: '/nonexistent', ...kubeFlags };
    await assert.rejects(
      pickRuntime({ ...flags, kubernetesTimeout: '20s' }, { log, clock: systemClock }),
      /--kubernetes-timeout must be between 1ms and 10s: got 20s/,
    );
    await assert.rejects(
      pickRuntime({ ...flags, namespace: 'Not_A_Label' }, { log, clock: systemClock }),
      /--namespace must be a DNS label: got 'Not_A_Label'/,
    );
  });
});

describe('localPlatformDrivers (tether up)', () => {
  it('opens SQLite, the memory session store and plain local processes with --isolation none', async () => {
    const drivers = localPlatformDrivers({ isolation: 'none', graceMs: 500 });
    const data = fresh();
    const { store, dataLock } = await drivers.openStore(data);
    assert.ok(store instanceof SqliteStore);
    assert.ok(dataLock);
    await store.close();
    dataLock.release();
    const sessions = drivers.openSessionStore(systemClock);
    assert.ok(sessions instanceof MemorySessionStore);
    await sessions.close();
    const local = await drivers.openRuntime({ memoryUrl: 'http://127.0.0.1:1', hidden: [data], log });
    assert.equal(local.isolation, 'none');
    assert.ok(local.runtime instanceof LocalRuntime);
    await local.runtime.close();
  });
});
