/**
 * @module
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time by function and by file, top N.
 * Usage: `node --import tsx bench/lib/cpuprofile-summary.ts <file.cpuprofile> [top=25]`.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: cpuprofile-summary.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
let total = 0;
for (const v of selfUs.values()) total += v;

const shortUrl = (url: string) => url.replace(/^file:\/\/.*?\/(node_modules|src|bench)\//, '$1/').replace(/\?.*$/, '');
const fnKey = (n: ProfileNode) =>
  `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const fileKey = (n: ProfileNode) => {
  const u = shortUrl(n.callFrame.url);
  const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
  return m ? `node_modules/${m[1]}` : u || `(${n.callFrame.functionName})`;
};
const sum = (key: (n: ProfileNode) => string) => {
  const out = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    if (n) out.set(key(n), (out.get(key(n)) ?? 0) + us);
  }
  return [...out.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
};
const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
console.log(`total sampled ${(total / 1e6).toFixed(2)} s`);
console.log('\nself time by file/package:');
for (const [k, us] of sum(fileKey)) console.log(`${pct(us)}  ${k}`);
console.log('\nself time by function:');
for (const [k, us] of sum(fnKey)) console.log(`${pct(us)}  ${k}`);
