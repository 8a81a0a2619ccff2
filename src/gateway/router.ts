/**
 * @module
 * Host-based routing: `Host: <name>.<namespace>.<domain>` (any port) picks the service.
 * The host table is built once at start; a lookup is one Map get. Used by the proxy.
 */
import type { ServiceState } from './state.ts';

/** Maps Host headers to services. */
export class Router {
  readonly #byHost = new Map<string, ServiceState>();
  /** Sorted known hosts, for 404 messages. */
  readonly knownHosts: readonly string[];

  constructor(services: Iterable<ServiceState>) {
    for (const svc of services) this.#byHost.set(svc.host, svc);
    this.knownHosts = Object.freeze([...this.#byHost.keys()].sort());
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
