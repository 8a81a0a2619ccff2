/**
 * @module
 * Which peers may speak for the client: `X-Forwarded-Proto` (and later `X-Forwarded-For`) is believed only
 * from an address listed with `--trusted-proxies` (IPs or CIDRs, IPv4 or IPv6), since any client can send
 * the header itself. Built on `net.BlockList` (Node's own address matcher). Used by session-key.ts to
 * decide whether a new session's cookie gets `Secure`.
 */
import { BlockList, isIP } from 'node:net';

/** A set of trusted proxy addresses. */
export class TrustedProxies {
  readonly #list = new BlockList();
  /** True when no address is trusted (nothing to check). */
  readonly empty: boolean;

  /**
   * @param entries addresses (`10.0.0.5`, `::1`) or CIDRs (`10.0.0.0/8`, `fd00::/8`)
   * @throws {Error} naming the entry that is neither
   */
  constructor(entries: readonly string[] = []) {
    let n = 0;
    for (const raw of entries) {
      const entry = raw.trim();
      if (!entry) continue;
      const [addr = '', bits, extra] = entry.split('/');
      const family = isIP(addr);
      const prefix = bits === undefined ? undefined : Number(bits);
      const max = family === 6 ? 128 : 32;
      if (
        family === 0 ||
        extra !== undefined ||
        (prefix !== undefined && (!/^\d+$/.test(bits as string) || (prefix as number) > max))
      ) {
        throw new Error(`Cannot trust proxy '${entry}': not an IP address or CIDR (e.g. 10.0.0.0/8, ::1)`);
      }
      const type = family === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.#list.addAddress(addr, type);
      else this.#list.addSubnet(addr, prefix, type);
      n++;
    }
    this.empty = n === 0;
  }

  /** True when `address` (a socket's remote address) is trusted. */
  has(address: string | undefined): boolean {
    if (this.empty || !address) return false;
    // A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d.
    const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
    const family = isIP(v4);
    if (family === 0) return false;
    return this.#list.check(v4, family === 6 ? 'ipv6' : 'ipv4');
  }
}

/**
 * True when a request came over HTTPS as seen by the nearest trusted proxy: the last value of its
 * `X-Forwarded-Proto` (the one that proxy appended) is `https`, and the peer is trusted.
 */
export function forwardedHttps(trusted: TrustedProxies, peer: string | undefined, proto: string | undefined): boolean {
  if (proto === undefined || !trusted.has(peer)) return false;
  const comma = proto.lastIndexOf(',');
  return (
    proto
      .slice(comma + 1)
      .trim()
      .toLowerCase() === 'https'
  );
}
