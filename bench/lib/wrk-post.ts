/**
 * @module
 * POSTs driven by wrk (C, a few microseconds of CPU per request) instead of the node:http driver of
 * http-load.ts (65-85 us per request): on 2 cores the client's CPU is taken from the server, so wrk's
 * figure is closer to what the server alone can do. JSON bodies prepared by the caller are cycled by a
 * Lua script that replaces `@N@` in each with a value unique to the request; a response with another
 * status, or without the expected text, counts as failed. Used by wrk-remember.ts and bench:resume.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { which } from './which.ts';

// args: bodies file, Authorization value, tag (keeps a run's values new), path, expected status,
// expected text in the body ('' for any), then extra headers as name=value.
const SCRIPT = `
local bodies = {}
local n = 0
bad = 0
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. args[2]
  tag = args[3]
  path = args[4]
  want_status = tonumber(args[5])
  want_text = args[6]
  for i = 7, #args do
    local k, v = args[i]:match("^([^=]+)=(.*)$")
    wrk.headers[k] = v
  end
end
function request()
  n = n + 1
  local body = bodies[(n % #bodies) + 1]:gsub("@N@", tag .. n)
  return wrk.format("POST", path, nil, body)
end
function response(status, headers, body)
  if status ~= want_status or (want_text ~= "" and not body:find(want_text, 1, true)) then bad = bad + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("bad") end
  io.write(string.format("FAILED %d\\n", total))
end
`;

/** The wrk binary, or null when it is not installed. */
export const findWrk = (): string | null => which('wrk', ['/usr/bin/wrk']);

/** What one run measured. */
export interface WrkResult {
  perSecond: number;
  /** Latency percentiles of the run, ms (wrk's --latency distribution). */
  p50Ms: number;
  p99Ms: number;
  /** Requests answered with another status or without the expected text. */
  failed: number;
}

/** What the requests are and what a good answer is. */
export interface WrkPostOptions {
  /** Request path, e.g. `/v1/turns`. */
  path: string;
  /** JSON bodies, each with the `@N@` placeholder somewhere in a string. */
  bodies: string[];
  /** @default 200 */
  status?: number;
  /** Text a good answer contains. @default '' (any) */
  expect?: string;
  /** File name stem in `dir`. */
  name: string;
}

/** A prepared wrk run: script and bodies written. */
export interface WrkPost {
  /** Runs `connections` keep-alive connections for `seconds`; `tag` keeps this run's values new. */
  run(
    url: string,
    key: string,
    tag: string,
    connections: number,
    seconds: number,
    headers?: Record<string, string>,
  ): Promise<WrkResult>;
}

/**
 * Writes the script and the bodies to `dir`.
 * @throws {Error} when a body lacks the `@N@` placeholder (its value would repeat)
 */
export async function prepareWrkPost(wrk: string, dir: string, o: WrkPostOptions): Promise<WrkPost> {
  if (o.bodies.some((b) => !b.includes('@N@'))) throw new Error('every body needs the @N@ placeholder');
  const script = join(dir, `${o.name}.lua`);
  const bodyFile = join(dir, `${o.name}-bodies.ndjson`);
  await writeFile(script, SCRIPT);
  await writeFile(bodyFile, `${o.bodies.join('\n')}\n`);
  return {
    async run(url, key, tag, connections, seconds, headers = {}) {
      if (!/^https?:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/.test(url)) {
        throw new Error(`wrk runs against loopback only: got ${url}`);
      }
      const args = ['-t1', '--latency', `-c${connections}`, `-d${seconds}s`, '-s', script, `${url}/`];
      args.push('--', bodyFile, key, tag, o.path, String(o.status ?? 200), o.expect ?? '');
      for (const [k, v] of Object.entries(headers)) args.push(`${k}=${v}`);
      const { stdout } = await promisify(execFile)(wrk, args, { encoding: 'utf8' });
      return {
        perSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]),
        p50Ms: percentileMs(stdout, '50%'),
        p99Ms: percentileMs(stdout, '99%'),
        failed: Number(/FAILED (\d+)/.exec(stdout)?.[1] ?? Number.NaN),
      };
    },
  };
}

/** A percentile line of wrk's latency distribution (`99%  12.92ms`), in ms; NaN when absent. */
function percentileMs(stdout: string, label: string): number {
  const m = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(stdout);
  if (!m) return Number.NaN;
  const unit = { us: 0.001, ms: 1, s: 1000 }[m[2] as 'us' | 'ms' | 's'];
  return Number(m[1]) * unit;
}
