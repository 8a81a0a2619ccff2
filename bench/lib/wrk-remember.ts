/**
 * @module
 * Remembers/s driven by wrk (see wrk-post.ts) for bench:memory, which prints it beside the node:http
 * driver's figure: the node figure is comparable with earlier runs, the wrk one is closer to what the
 * server alone can do. Bodies are bench:memory's remember mix; every value is made unique per request,
 * and a response without `"stored":true` counts as an error.
 */
import { prepareWrkPost, type WrkResult } from './wrk-post.ts';

export { findWrk, type WrkResult } from './wrk-post.ts';

/** A prepared wrk remember run. */
export interface WrkRemember {
  /** Runs `connections` keep-alive connections for `seconds`; `tag` keeps this run's values new. */
  run(url: string, key: string, tag: string, connections: number, seconds: number): Promise<WrkResult>;
}

/**
 * Writes the script and `bodies` (JSON remember bodies whose value contains `@N@`, replaced per request).
 * @throws {Error} when a body lacks the `@N@` placeholder (its value would repeat and be `already_known`)
 */
export async function prepareWrkRemember(wrk: string, dir: string, bodies: string[]): Promise<WrkRemember> {
  const post = await prepareWrkPost(wrk, dir, {
    name: 'remember',
    path: '/v1/memories',
    bodies,
    status: 200,
    expect: '"stored":true',
  });
  return { run: (url, key, tag, connections, seconds) => post.run(url, key, tag, connections, seconds) };
}
