/**
 * @module
 * Addresses and names of instance networks: one /16 for all instances, chosen among candidates so it
 * overlaps none of the machine's own networks, cut into /30 slots (host side .1, instance side .2).
 * A slot also names the instance's network namespace and veth pair (`tth<4 hex>`, `…h` host side,
 * `…c` in the instance) and its uid. Pure; network.ts applies it.
 */

/** Candidate ranges, in order: private and shared (RFC 6598) space rarely used by home or office networks. */
export const CANDIDATE_RANGES: readonly string[] = Object.freeze([
  '10.213.0.0/16',
  '10.177.0.0/16',
  '100.91.0.0/16',
  '172.29.0.0/16',
  '10.251.0.0/16',
]);

/** Slots per range: a /16 holds 16384 /30 networks. */
export const SLOTS = 16384;

/** Every interface and namespace this runtime makes starts with this (nothing else on a machine should). */
export const NAME_PREFIX = 'tth';

/** The base of the per-instance uids (uid = base + slot; no such user exists in /etc/passwd). */
export const UID_BASE = 1_900_000_000;

/** One instance's network. */
export interface SlotPlan {
  slot: number;
  /** Network namespace name. */
  netns: string;
  /** Host-side veth. */
  hostIf: string;
  /** Instance-side veth (inside the namespace). */
  instanceIf: string;
  hostIp: string;
  instanceIp: string;
  prefix: 30;
  /** The instance's own uid (and gid) on the host. */
  uid: number;
}

/** `a.b.c.d` to an unsigned 32-bit number. */
export function ipToInt(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`not an IPv4 address: ${ip}`);
  }
  return (((parts[0] ?? 0) << 24) | ((parts[1] ?? 0) << 16) | ((parts[2] ?? 0) << 8) | (parts[3] ?? 0)) >>> 0;
}

/** An unsigned 32-bit number to `a.b.c.d`. */
export function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** First and last address of a CIDR (`10.0.0.0/8`; a bare address is a /32). */
export function cidrRange(cidr: string): [number, number] {
  const [ip = '', bits = '32'] = cidr.split('/');
  const prefix = Number(bits);
  const size = 2 ** (32 - prefix);
  const start = Math.floor(ipToInt(ip) / size) * size;
  return [start, start + size - 1];
}

/** True when the two CIDRs share an address. */
export function overlaps(a: string, b: string): boolean {
  const [a0, a1] = cidrRange(a);
  const [b0, b1] = cidrRange(b);
  return a0 <= b1 && b0 <= a1;
}

/**
 * The first candidate range that overlaps none of `hostNetworks` (the machine's addresses and routes,
 * without those of our own `tth…` interfaces; a default route `0.0.0.0/0` is not a network).
 * @throws {Error} when every candidate collides
 */
export function chooseRange(hostNetworks: readonly string[], candidates = CANDIDATE_RANGES): string {
  const nets = hostNetworks.filter((n) => !n.endsWith('/0') && n !== 'default');
  for (const c of candidates) if (!nets.some((n) => overlaps(c, n))) return c;
  throw new Error(`every candidate instance network collides with this machine's networks: ${candidates.join(', ')}`);
}

/** The names and addresses of slot `slot` of `range`. */
export function slotPlan(range: string, slot: number): SlotPlan {
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS)
    throw new Error(`slot must be 0..${SLOTS - 1}: got ${slot}`);
  const [start] = cidrRange(range);
  const base = start + slot * 4;
  const id = `${NAME_PREFIX}${slot.toString(16).padStart(4, '0')}`;
  return {
    slot,
    netns: id,
    hostIf: `${id}h`,
    instanceIf: `${id}c`,
    hostIp: intToIp(base + 1),
    instanceIp: intToIp(base + 2),
    prefix: 30,
    uid: UID_BASE + slot,
  };
}

/** The slot a `tth<hex>` name belongs to, or undefined. */
export function slotOfName(name: string): number | undefined {
  const m = /^tth([0-9a-f]{4})[hc]?$/.exec(name);
  return m ? Number.parseInt(m[1] ?? '', 16) : undefined;
}
