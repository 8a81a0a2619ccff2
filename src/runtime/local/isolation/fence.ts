/**
 * @module
 * The network fence of local instances, in an nftables table of this runtime's own (`inet
 * tether_<pid>_<n>`, deleted by `close()`): traffic coming in from an instance's veth reaches only the
 * memory server (DNAT from the veth's host address to where it listens), and nothing else on the host
 * (gateway admin port, other instances, databases, any local port: rejected as admin-prohibited, so a
 * probe fails at once); forwarding off unless the service asks for public egress. The gateway reaches
 * instances through its own output path, which the fence does not touch. Rules match only our set of
 * interfaces, so other tables and the host's traffic are untouched. Used by namespaces-isolation.ts.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { SlotPlan } from './address-plan.ts';

const run = promisify(execFile);

/** Addresses public egress never reaches: private, shared, loopback, link-local and multicast space. */
export const NEVER_EGRESS: readonly string[] = Object.freeze([
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '224.0.0.0/3',
]);

/** Where an instance's memory traffic goes: `<hostIp>:<port>` on its veth is sent to `target:port`. */
export interface MemoryRoute {
  port: number;
  targetIp: string;
  targetPort: number;
}

const TABLE_RE = /^tether_(\d+)_(\d+)$/;
let tables = 0;

/**
 * The table's ruleset (nft syntax). `hostNetworks` join NEVER_EGRESS as addresses egress may not reach.
 * Pure: tested as text, applied by `Fence.create`.
 */
export function fenceRuleset(table: string, hostNetworks: readonly string[]): string {
  const never = [...NEVER_EGRESS, ...hostNetworks].join(', ');
  return `table inet ${table} {
  set instances { type ifname; }
  set egress { type ifname; }
  set never_egress { type ipv4_addr; flags interval; auto-merge; elements = { ${never} }; }
  map memory { type ifname . ipv4_addr . inet_service : ipv4_addr . inet_service; }
  chain fence_prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    iifname @instances meta nfproto ipv4 dnat ip to iifname . ip daddr . tcp dport map @memory
  }
  chain fence_input {
    type filter hook input priority filter; policy accept;
    iifname @instances ct state established,related accept
    iifname @instances ct status dnat accept
    iifname @instances reject with icmpx admin-prohibited
  }
  chain fence_forward {
    type filter hook forward priority filter; policy accept;
    iifname @egress ip daddr != @never_egress accept
    oifname @egress ct state established,related accept
    iifname @instances reject with icmpx admin-prohibited
    oifname @instances reject with icmpx admin-prohibited
  }
  chain fence_postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    iifname @egress ip daddr != @never_egress masquerade
  }
}
`;
}

async function nft(bin: string, script: string): Promise<void> {
  const p = run(bin, ['-f', '-'], { timeout: 10_000 });
  p.child.stdin?.end(script);
  await p;
}

/** One runtime's fence. */
export class Fence {
  readonly table: string;
  readonly #bin: string;
  readonly #admitted = new Map<string, string[]>();
  #closed = false;

  private constructor(bin: string, table: string) {
    this.#bin = bin;
    this.table = table;
  }

  /** Creates this runtime's table. */
  static async create(bin: string, hostNetworks: readonly string[]): Promise<Fence> {
    const table = `tether_${process.pid}_${++tables}`;
    await nft(bin, fenceRuleset(table, hostNetworks));
    return new Fence(bin, table);
  }

  /** Lets the slot's instance through the fence (before its veth exists: nothing passes unfenced). */
  async admit(p: SlotPlan, memory: MemoryRoute | undefined, egress: boolean): Promise<void> {
    const elements = [`instances { "${p.hostIf}" }`];
    if (memory) {
      elements.push(
        `memory { "${p.hostIf}" . ${p.hostIp} . ${memory.port} : ${memory.targetIp} . ${memory.targetPort} }`,
      );
    }
    if (egress) elements.push(`egress { "${p.hostIf}" }`);
    await nft(this.#bin, elements.map((e) => `add element inet ${this.table} ${e}`).join('\n'));
    this.#admitted.set(
      p.hostIf,
      elements.map((e) => e.replace(/ : [^}]+/, ' ')),
    );
  }

  /** Removes the slot's elements (after its network is gone). */
  async forget(p: SlotPlan): Promise<void> {
    const elements = this.#admitted.get(p.hostIf);
    if (!elements || this.#closed) return;
    this.#admitted.delete(p.hostIf);
    await nft(this.#bin, elements.map((e) => `delete element inet ${this.table} ${e}`).join('\n')).catch(() => {});
  }

  /** Deletes the table. Safe twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await nft(this.#bin, `delete table inet ${this.table}`).catch(() => {});
  }
}

/** Deletes the fence tables of runtimes whose process is gone (a SIGKILLed gateway). */
export async function reapFences(bin: string, isAlive: (pid: number) => boolean): Promise<string[]> {
  const { stdout } = await run(bin, ['list', 'tables', 'inet'], { timeout: 10_000 }).catch(() => ({ stdout: '' }));
  const reaped: string[] = [];
  for (const line of stdout.split('\n')) {
    const name = line.trim().split(' ')[2] ?? '';
    const m = TABLE_RE.exec(name);
    if (!m || isAlive(Number(m[1]))) continue;
    await nft(bin, `delete table inet ${name}`).catch(() => {});
    reaped.push(name);
  }
  return reaped;
}
