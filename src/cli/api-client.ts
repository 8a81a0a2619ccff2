/**
 * @module
 * The HTTP client of the everyday CLI commands (keys, facts, sessions, instances, logs): where the URL and
 * the credential come from, one `apiRequest` that turns an API error into `CliError` carrying the API's
 * own message, and the exit codes those errors map to. No server code is imported.
 * It speaks node:http, not fetch: undici (fetch) is loaded on first use and was half the start of `tether recall`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';

/** Exit codes of the `tether` command (docs/cli.md, "Exit codes"). */
export const EXIT = Object.freeze({
  ok: 0,
  /** The API refused the request (400, 409, 413, 429, …) or something else failed. */
  failed: 1,
  /** Bad command line: unknown flag, missing argument, bad value. */
  usage: 2,
  /** 401 or 403: no key, a wrong, expired or revoked key, or a key that may not do this. */
  denied: 3,
  /** 404: no such key, instance or path. */
  notFound: 4,
  /** The server could not be reached, or answered 5xx (503 unavailable, …). */
  unavailable: 5,
});

/** A failure the CLI prints as `tether: <message>` and exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The exit code of an HTTP status. */
export function exitCodeOf(status: number): number {
  if (status === 401 || status === 403) return EXIT.denied;
  if (status === 404) return EXIT.notFound;
  if (status >= 500) return EXIT.unavailable;
  return EXIT.failed;
}

/** The folder `tether up` keeps its data in (memory/admin.key, gateway/admin.token): `TETHER_DATA`, as for `up`. */
function dataDir(): string {
  return process.env.TETHER_DATA ?? '.tether';
}

function readSecret(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined;
}

/** Flags of the commands that talk to the memory server. */
export interface MemoryClientFlags {
  url: string;
  key?: string;
  json?: boolean;
}

/** The memory key: `--key`, else `TETHER_KEY`, else the local admin key file `tether up` wrote. */
export function memoryKeyOf(flags: MemoryClientFlags): string {
  const file = join(dataDir(), 'memory', 'admin.key');
  const key = flags.key ?? (process.env.TETHER_KEY || undefined) ?? readSecret(file);
  if (!key) throw new CliError(`no key: give --key, set TETHER_KEY, or run where ${file} exists`, EXIT.usage);
  return key;
}

/** Flags of the commands that talk to the gateway admin API. */
export interface GatewayClientFlags {
  adminUrl: string;
  token?: string;
  json?: boolean;
}

/** The gateway admin token, if any: `--token`, else `TETHER_GATEWAY_ADMIN_TOKEN`, else `<data>/gateway/admin.token`. */
export function gatewayTokenOf(flags: GatewayClientFlags): string | undefined {
  return (
    flags.token ??
    (process.env.TETHER_GATEWAY_ADMIN_TOKEN || undefined) ??
    readSecret(join(dataDir(), 'gateway', 'admin.token'))
  );
}

/** One API call. */
export interface ApiRequest {
  method?: string;
  /** Bearer credential. */
  bearer?: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
}

/**
 * Calls `base` + `path` and returns the parsed JSON answer (undefined for 204).
 * @throws {CliError} with the API's `error.message` and the exit code of its status, or
 *   `unavailable` when nothing answers at `base`
 */
export async function apiRequest(base: string, path: string, r: ApiRequest = {}): Promise<unknown> {
  const url = new URL(path, base);
  for (const [k, v] of Object.entries(r.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = {};
  if (r.bearer) headers.authorization = `Bearer ${r.bearer}`;
  const body = r.body === undefined ? undefined : JSON.stringify(r.body);
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  let res: HttpAnswer;
  try {
    res = await send(url, r.method ?? 'GET', headers, body);
  } catch (err) {
    // An AggregateError when several addresses were tried (localhost: ::1 and 127.0.0.1).
    const e = err as { code?: string; errors?: { code?: string }[]; message: string };
    const cause = e.code ?? e.errors?.[0]?.code ?? e.message;
    throw new CliError(`cannot reach ${url.origin} (${cause}): is the server running?`, EXIT.unavailable);
  }
  if (res.status === 204) return undefined;
  let parsed: unknown;
  try {
    parsed = res.text === '' ? undefined : JSON.parse(res.text);
  } catch {
    parsed = undefined;
  }
  if (res.status < 200 || res.status > 299) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    const message = error ? `${error.code}: ${error.message}` : res.text.slice(0, 200) || res.statusText;
    throw new CliError(`${res.status} ${message}`, exitCodeOf(res.status));
  }
  return parsed;
}

/** A whole HTTP answer. */
interface HttpAnswer {
  status: number;
  statusText: string;
  text: string;
}

/** One request over node:http (node:https, loaded only then, for an https URL); rejects on a socket error. */
async function send(url: URL, method: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
  const request = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}
