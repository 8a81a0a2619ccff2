/**
 * The kind-agent sandbox of deploy/kind (run by the session gateway from its Knative Service, in the tether
 * image, as `node --input-type=module -e <this file>`): each route runs one of the seed's checks with the
 * sandbox's own workload token (TETHER_TOKEN_FILE) against the memory server (TETHER_URL) and answers JSON.
 * The gateway's readiness and warm-up requests (x-tether-probe) get 200 without a key: a warm sandbox has none.
 * Plain Node 20, no imports from the checkout (the image has only src/ and node_modules).
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
const base = process.env.TETHER_URL;
async function exchange() {
  const token = readFileSync(process.env.TETHER_TOKEN_FILE, 'utf8');
  const r = await fetch(`${base}/v1/auth/kubernetes`, { method: 'POST',
    headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  return { status: r.status, body: await r.json() };
}
async function call(key, method, path, body, headers = {}) {
  const r = await fetch(base + path, { method, body: body === undefined ? undefined : JSON.stringify(body),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers } });
  return { status: r.status, json: await r.json() };
}
const reach = (host) => new Promise((done) => {
  const s = connect({ host, port: 5432, timeout: 3000 });
  s.on('connect', () => { s.destroy(); done(true); });
  s.on('timeout', () => { s.destroy(); done(false); });
  s.on('error', () => done(false));
});
const routes = {
  async '/exchange'() { const x = await exchange(); return { status: x.status, namespace: x.body.namespace }; },
  async '/remember'() {
    const { body } = await exchange();
    const pref = { subject: 'user', predicate: 'prefers', value: 'dark mode' };
    const one = await call(body.key, 'POST', '/v1/memories', pref);
    const two = await call(body.key, 'POST', '/v1/memories', pref);
    return { stored: one.json.stored, already_known: two.json.already_known };
  },
  async '/save'() {
    const { body } = await exchange();
    const resumed = await call(body.key, 'POST', '/v1/resume', {});
    const epoch = resumed.json.epoch;
    const saved = await call(body.key, 'PATCH', '/v1/working-state', { goal: 'ship issue 14', step: 3 },
      { 'x-lease-epoch': String(epoch) });
    await call(body.key, 'POST', '/v1/lease/release', { epoch });
    return { resumed: resumed.status, saved: saved.status };
  },
  async '/resume'() {
    const { body } = await exchange();
    const r = await call(body.key, 'POST', '/v1/resume', {});
    if (r.status === 200) await call(body.key, 'POST', '/v1/lease/release', { epoch: r.json.epoch });
    return { status: r.status, namespace: body.namespace, goal: r.json.working_state?.goal ?? null };
  },
  async '/read'(url) {
    const { body } = await exchange();
    const ns = url.searchParams.get('namespace');
    const read = await call(body.key, 'GET', `/v1/memories?namespace=${encodeURIComponent(ns)}&subject=user`);
    const resume = await call(body.key, 'POST', '/v1/resume', { namespace: ns });
    return { read: read.status, code: read.json.error?.code ?? null, resume: resume.status };
  },
  async '/db'(url) { return { reached: await reach(url.searchParams.get('host')) }; },
};
createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://agent');
  const route = req.headers['x-tether-probe'] === undefined ? routes[url.pathname] : async () => ({ ready: true });
  const body = route ? await route(url).catch((err) => ({ error: String(err) })) : { error: `no route ${url.pathname}` };
  res.writeHead(route ? 200 : 404, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}).listen(Number(process.env.PORT ?? 8080), '0.0.0.0');
