/**
 * @module
 * Host-based routing: `Host: <name>.<namespace>.<domain>` (any port) picks the service.
 * The host table is built at start and rebuilt by a reload (`replace`); a lookup is one Map get. Used by the proxy.
 */
import type { ServiceState } from './state.ts';

/** Maps Host headers to services. */
export class Router {
  #byHost = new Map<string, ServiceState>();
  #known: readonly string[] = [];

  constructor(services: Iterable<ServiceState>) {
    this.replace(services);
  }

  /** Sorted known hosts, for 404 messages. */
  get knownHosts(): readonly string[] {
    return this.#known;
  }

  /** Routes to `services` from now on (a reload). */
  replace(services: Iterable<ServiceState>): void {
    const byHost = new Map<string, ServiceState>();
    for (const svc of services) byHost.set(svc.host, svc);
    this.#byHost = byHost;
    this.#known = Object.freeze([...byHost.keys()].sort());
  }

  /** The service of a Host header, or undefined. */
  match(hostHeader: string | undefined): ServiceState | undefined {
    if (!hostHeader) return undefined;
    const direct = this.#byHost.get(hostHeader);
    if (direct) return direct;
    let host = hostHeader.toLowerCase();
    const colon = host.lastIndexOf(':');
    if (colon > 0 && !host.endsWith(']')) host = host.slice(0, colon);
    if (host.endsWith('.')) host = host.slice(0, -1);
    return this.#byHost.get(host);
  }
}
