// The console's API client: the memory API with the admin (or agent) key, the gateway admin API with its
// token, both on the console's own origin (config.json says where). Errors keep the API's code and message.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call(base, path, { method = 'GET', bearer, query, body } = {}) {
  const url = new URL(base + path, location.origin);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, v);
  const headers = {};
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, 'unreachable', `${url.origin} does not answer`);
  }
  if (res.status === 204) return undefined;
  const data = await res.json().catch(() => undefined);
  if (!res.ok) {
    throw new ApiError(res.status, data?.error?.code ?? 'error', data?.error?.message ?? res.statusText);
  }
  return data;
}

/** The memory API for `key`, or null when this server has none. */
export function memoryApi(base, key) {
  if (base === null) return null;
  const get = (path, query) => call(base, path, { bearer: key, query });
  return {
    whoami: () => get('/v1/whoami'),
    keys: async () => (await get('/v1/keys', { limit: 1000 })).keys,
    mintKey: (body) => call(base, '/v1/keys', { method: 'POST', bearer: key, body }),
    revokeKey: (id) => call(base, `/v1/keys/${encodeURIComponent(id)}`, { method: 'DELETE', bearer: key }),
    recall: async (namespace, query) => (await get('/v1/memories', { namespace, ...query })).beliefs,
    // History comes a page at a time: follow `next`, at most 10 pages of 1,000 for one timeline.
    history: async (namespace, subject, predicate) => {
      const events = [];
      let cursor;
      for (let page = 0; page < 10; page++) {
        const answer = await get('/v1/memories/history', { namespace, subject, predicate, limit: 1000, cursor });
        events.push(...answer.events);
        if (!answer.next) break;
        cursor = answer.next;
      }
      return events;
    },
    registry: async (namespace) => (await get('/v1/registry', { namespace })).predicates,
    workingState: (namespace) => get('/v1/working-state', { namespace }),
    lease: (namespace) => get('/v1/lease', { namespace }),
    turns: (namespace, limit) => get('/v1/turns', { namespace, limit }),
    pointers: (namespace) => get('/v1/pointers', { namespace }),
  };
}

/** The gateway admin API for `token`, or null when this server has none. */
export function gatewayApi(base, token) {
  if (base === null) return null;
  const get = (path) => call(base, path, { bearer: token });
  return {
    sessions: (reveal = false) => get(`/_tether/sessions${reveal ? '?reveal=keys' : ''}`),
    instances: () => get('/_tether/instances'),
    services: () => get('/_tether/services'),
    logs: (name) => get(`/_tether/instances/${encodeURIComponent(name)}/logs`),
    endSession: (id, service) =>
      call(base, `/_tether/sessions/${encodeURIComponent(id)}`, {
        method: 'DELETE',
        bearer: token,
        query: { service },
      }),
    deleteInstance: (name) =>
      call(base, `/_tether/instances/${encodeURIComponent(name)}`, { method: 'DELETE', bearer: token }),
  };
}

/** Where the APIs are: `{memory, gateway}` base paths, null for an absent one. */
export async function loadConfig() {
  return call('', '/console/config.json');
}
