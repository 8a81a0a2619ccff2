/**
 * @module
 * Remembers/s driven by wrk (C, a few microseconds of CPU per request) instead of the node:http driver
 * of http-load.ts (65-85 us per request). On 2 cores the client's CPU is taken from the server, so
 * bench:memory prints both: the node figure is comparable with earlier runs, the wrk one is closer to
 * what the server alone can do. Bodies are prepared here (bench:memory's remember mix) and cycled by a
 * Lua script that makes every value unique; a response without `"stored":true` counts as an error.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { which } from './which.ts';

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
end
function request()
  n = n + 1
  local body = bodies[(n % #bodies) + 1]:gsub("@N@", tag .. n)
  return wrk.format("POST", "/v1/memories", nil, body)
end
function response(status, headers, body)
  if status ~= 200 or not body:find('"stored":true', 1, true) then bad = bad + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("bad") end
  io.write(string.format("FAILED %d\\n", total))
end
`;

/** The wrk binary, or null when it is not installed. */
export const findWrk = (): string | null => which('wrk', ['/usr/bin/wrk']);

/** A prepared wrk remember run: bodies and script written to `dir`. */
export interface WrkRemember {
  /** Runs `connections` keep-alive connections for `seconds`; `tag` keeps this run's values new. */
  run(url: string, key: string, tag: string, connections: number, seconds: number): Promise<WrkResult>;
}

/** What one run measured. */
export interface WrkResult {
  perSecond: number;
  /** Latency percentiles of the run, ms (wrk's --latency distribution). */
  p50Ms: number;
  p99Ms: number;
  /** Requests answered with anything but 200 and `"stored":true`. */
  failed: number;
}

/**
 * Writes the script and `bodies` (JSON remember bodies whose value contains `@N@`, replaced per request).
 * @throws {Error} when a body lacks the `@N@` placeholder (its value would repeat and be `already_known`)
 */
export async function prepareWrkRemember(wrk: string, dir: string, bodies: string[]): Promise<WrkRemember> {
  if (bodies.some((b) => !b.includes('@N@'))) throw new Error('every body needs the @N@ placeholder');
  const script = join(dir, 'remember.lua');
  const bodyFile = join(dir, 'remember-bodies.ndjson');
  await writeFile(script, SCRIPT);
  await writeFile(bodyFile, `${bodies.join('\n')}\n`);
  return {
    async run(url, key, tag, connections, seconds) {
      if (!/^https?:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/.test(url)) {
        throw new Error(`wrk runs against loopback only: got ${url}`);
      }
      const args = ['-t1', '--latency', `-c${connections}`, `-d${seconds}s`, '-s', script, `${url}/`];
      args.push('--', bodyFile, key, tag);
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
