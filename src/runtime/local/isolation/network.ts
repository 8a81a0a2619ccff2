/**
 * @module
 * Per-instance networks with iproute2: a named network namespace and a veth pair, the host side
 * `tth<slot>h` with the slot's .1 address, the instance side `tth<slot>c` with .2 and the loopback up.
 * Creating the namespace is the slot lock between runtimes (the kernel refuses a name that exists).
 * Touches only our own `tth…` names and their per-interface sysctls. Used by namespaces-isolation.ts.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { CANDIDATE_RANGES, NAME_PREFIX, type SlotPlan } from './address-plan.ts';

const run = promisify(execFile);

/** `ip` said the slot's namespace exists: another runtime holds it. */
export class SlotTakenError extends Error {}

/** Runs `ip` with `args`, feeding `input` (for -batch). */
async function ip(bin: string, args: string[], input?: string): Promise<string> {
  const child = run(bin, args, { timeout: 10_000 });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  return (await child).stdout;
}

/** The machine's IPv4 networks (addresses and routes), without those on our own interfaces. */
export async function hostNetworks(bin: string): Promise<string[]> {
  const out: string[] = [];
  const addrs = JSON.parse(await ip(bin, ['-j', '-4', 'addr', 'show'])) as Array<{
    ifname: string;
    addr_info?: Array<{ local: string; prefixlen: number }>;
  }>;
  for (const a of addrs) {
    if (a.ifname.startsWith(NAME_PREFIX)) continue;
    for (const i of a.addr_info ?? []) out.push(`${i.local}/${i.prefixlen}`);
  }
  const routes = JSON.parse(await ip(bin, ['-j', '-4', 'route', 'show', 'table', 'all'])) as Array<{
    dst: string;
    dev?: string;
    type?: string;
  }>;
  for (const r of routes) {
    if (r.dev?.startsWith(NAME_PREFIX) || r.dst === 'default') continue;
    if (r.type === 'unreachable' && CANDIDATE_RANGES.includes(r.dst)) continue; // our own holdRange
    if (r.type === 'broadcast' || r.type === 'local') continue; // covered by the address itself
    out.push(r.dst.includes('/') ? r.dst : `${r.dst}/32`);
  }
  return out;
}

/**
 * Routes the whole instance range nowhere (`unreachable`), so a packet for an instance that is gone (its /30
 * went with its veth) fails on this machine instead of leaving by the default route to whatever answers
 * there. Live slots' /30 routes are more specific and win. Idempotent, and left in place: other runtimes of
 * the machine may use the same range, and it routes nothing that could reach anything.
 */
export async function holdRange(bin: string, range: string): Promise<void> {
  await ip(bin, ['route', 'replace', 'unreachable', range]);
}

/**
 * Creates the slot's namespace: the lock on the slot between runtimes.
 * @throws {SlotTakenError} when the namespace exists already
 */
export async function reserveSlot(bin: string, p: SlotPlan): Promise<void> {
  try {
    await ip(bin, ['netns', 'add', p.netns]);
  } catch (err) {
    if (/exists/i.test(String((err as { stderr?: string }).stderr ?? ''))) throw new SlotTakenError(p.netns);
    throw err;
  }
}

/** Tools `createNetwork` runs inside the instance's namespace. */
export interface NetnsTools {
  nsenter: string;
  sh: string;
  nft: string;
}

/**
 * Wires the reserved slot's veth pair, addressed and up (call once the fence admits it). Inside the
 * namespace, connections to the instance address on `port` are sent to its loopback, so an app that
 * listens on 127.0.0.1 (as the examples do, safely, when run as plain processes) is reachable too.
 */
export async function createNetwork(
  bin: string,
  p: SlotPlan,
  o: { egress: boolean; port: number; tools: NetnsTools },
): Promise<void> {
  try {
    await ip(
      bin,
      ['-batch', '-'],
      [
        `link add ${p.hostIf} type veth peer name ${p.instanceIf} netns ${p.netns}`,
        `addr add ${p.hostIp}/${p.prefix} dev ${p.hostIf}`,
        `link set ${p.hostIf} up`,
        '',
      ].join('\n'),
    );
    await ip(
      bin,
      ['-n', p.netns, '-batch', '-'],
      [
        `addr add ${p.instanceIp}/${p.prefix} dev ${p.instanceIf}`,
        `link set ${p.instanceIf} up`,
        'link set lo up',
        '',
      ].join('\n'),
    );
    // The memory server listens on the host's loopback: the fence DNATs to it, which the kernel routes
    // only when the incoming interface allows it. IPv6 off: the fence speaks IPv4 only.
    writeFileSync(`/proc/sys/net/ipv4/conf/${p.hostIf}/route_localnet`, '1');
    writeFileSync(`/proc/sys/net/ipv6/conf/${p.hostIf}/disable_ipv6`, '1');
    // Public egress: packets from this veth may be forwarded (the host's own ip_forward still decides).
    if (o.egress) writeFileSync(`/proc/sys/net/ipv4/conf/${p.hostIf}/forwarding`, '1');
    const inside = run(
      o.tools.nsenter,
      [
        `--net=/run/netns/${p.netns}`,
        '--',
        o.tools.sh,
        '-c',
        // /proc/sys/net shows the namespace of whoever opens it: here, the instance's.
        `echo 1 > /proc/sys/net/ipv4/conf/${p.instanceIf}/route_localnet && exec "$0" -f -`,
        o.tools.nft,
      ],
      { timeout: 10_000 },
    );
    inside.child.stdin?.end(
      `table ip tether_instance {\n  chain to_loopback {\n    type nat hook prerouting priority dstnat; policy accept;\n` +
        `    iifname "${p.instanceIf}" ip daddr ${p.instanceIp} tcp dport ${o.port} dnat to 127.0.0.1:${o.port}\n  }\n}\n`,
    );
    await inside;
  } catch (err) {
    await destroyNetwork(bin, p.netns);
    throw err;
  }
}

/** Deletes the namespace (which deletes the veth pair with it); a missing one is fine. */
export async function destroyNetwork(bin: string, netns: string): Promise<void> {
  try {
    await ip(bin, ['netns', 'del', netns]);
  } catch {
    // already gone
  }
  try {
    await ip(bin, ['link', 'del', `${netns}h`]);
  } catch {
    // gone with the namespace (the usual case)
  }
}
