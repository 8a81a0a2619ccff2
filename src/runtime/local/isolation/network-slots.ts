/**
 * @module
 * The network slots of one runtime: takes a free slot (its namespace name is the lock between
 * gateways), fences it, wires its veth pair — and keeps one such slot ready in advance, so a cold
 * start does not wait for a network namespace, a veth pair and three nft/ip runs (about 20-40 ms here).
 * The spare has no public egress (a service asking for egress gets a slot made for it). Each slot
 * taken or spare has a record (`record`), so a runtime that is SIGKILLed has it reaped by the next.
 * Used by namespaces-isolation.ts.
 */
import { spawnSync } from 'node:child_process';
import type { Logger } from '../../../common/log.ts';
import { SLOTS, type SlotPlan, slotPlan } from './address-plan.ts';
import type { Fence, MemoryRoute } from './fence.ts';
import type { HostCapabilities } from './host-probe.ts';
import { createNetwork, destroyNetwork, reserveSlot, SlotTakenError } from './network.ts';

/**
 * Delay before making the next spare, so its ip/nft runs do not compete with the prepare of the start that
 * took the last one; short, as starts may come a few hundred ms apart (scale to zero, then a new session):
 * at 250 ms every other such start found no spare and made its own slot on its own time.
 */
const REFILL_DELAY_MS = 50;

/** Options of `NetworkSlots`. */
export interface NetworkSlotsOptions {
  range: string;
  fence: Fence;
  memory: MemoryRoute | undefined;
  /** The port instances listen on inside their namespace. */
  port: number;
  caps: HostCapabilities;
  log: Logger;
  /** Writes the record of a slot (called before its network exists); `forget` removes it. */
  record(plan: SlotPlan): void;
  forget(plan: SlotPlan): void;
  /** Called when a spare is ready, before anyone takes it. */
  spareReady?(plan: SlotPlan): void;
}

/** Hands out fenced network slots, one kept ready. */
export class NetworkSlots {
  readonly #o: NetworkSlotsOptions;
  #next = Math.floor(Math.random() * SLOTS);
  #spare: Promise<SlotPlan | undefined> | undefined;
  #spareReady: SlotPlan | undefined;
  #refill: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(o: NetworkSlotsOptions) {
    this.#o = o;
    this.#scheduleSpare(0);
  }

  /** A fenced, wired slot for an instance: the spare when it fits and is ready, else a new one. */
  async take(instance: string, publicEgress: boolean): Promise<SlotPlan> {
    const egress = publicEgress && this.#o.caps.forwarding;
    if (publicEgress && !this.#o.caps.forwarding) {
      this.#o.log.warn(
        { instance },
        'public egress asked for, but this machine does not forward IPv4 (net.ipv4.ip_forward=0): egress off',
      );
    }
    let plan: SlotPlan | undefined;
    if (!egress && this.#spare) {
      const spare = this.#spare;
      this.#spare = undefined;
      plan = await spare;
      this.#spareReady = undefined;
    }
    plan ??= await this.#make(egress);
    this.#scheduleSpare(REFILL_DELAY_MS);
    return plan;
  }

  /** Removes a slot's network and fence elements (after its instance ended). */
  async release(plan: SlotPlan): Promise<void> {
    await destroyNetwork(this.#o.caps.tools.ip as string, plan.netns);
    await this.#o.fence.forget(plan);
  }

  /** Removes the spare; takes no more. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#refill);
    const spare = await this.#spare;
    this.#spare = undefined;
    if (spare) {
      await this.release(spare);
      this.#o.forget(spare);
    }
  }

  /** At process exit (synchronous): deletes the spare's namespace. */
  abandonSync(): void {
    const ip = this.#o.caps.tools.ip;
    if (this.#spareReady && ip) spawnSync(ip, ['netns', 'del', this.#spareReady.netns], { timeout: 2000 });
  }

  #scheduleSpare(delayMs: number): void {
    if (this.#closed || this.#spare || this.#refill) return;
    this.#refill = setTimeout(() => {
      this.#refill = undefined;
      if (this.#closed || this.#spare) return;
      this.#spare = this.#make(false).then(
        (plan) => {
          this.#spareReady = plan;
          this.#o.spareReady?.(plan);
          return plan;
        },
        (err: Error) => {
          this.#o.log.warn(
            { err: err.message },
            'could not make a spare instance network; the next start makes its own',
          );
          return undefined;
        },
      );
    }, delayMs);
    this.#refill.unref();
  }

  /** Takes a free slot (the namespace name is the lock), fences it, then wires its veth pair. */
  async #make(egress: boolean): Promise<SlotPlan> {
    const ip = this.#o.caps.tools.ip as string;
    for (let tries = 0; tries < SLOTS; tries++) {
      const plan = slotPlan(this.#o.range, this.#next);
      this.#next = (this.#next + 1) % SLOTS;
      try {
        await reserveSlot(ip, plan);
      } catch (err) {
        if (err instanceof SlotTakenError) continue;
        throw err;
      }
      try {
        this.#o.record(plan);
        await this.#o.fence.admit(plan, this.#o.memory, egress);
        const { nsenter, sh, nft } = this.#o.caps.tools;
        await createNetwork(ip, plan, {
          egress,
          port: this.#o.port,
          tools: { nsenter: nsenter as string, sh: sh as string, nft: nft as string },
        });
        return plan;
      } catch (err) {
        await this.release(plan);
        this.#o.forget(plan);
        throw err;
      }
    }
    throw new Error('no free instance network slot');
  }
}
