/**
 * @module
 * Shared memory the read workers lend heavy answers in, so the event loop gets a history page or a
 * recall's bytes without a new ArrayBuffer per answer. Why: V8 counts every ArrayBuffer a thread
 * receives as the heap's external memory, and with the servers' heap flags (`server/node-flags.ts`:
 * the next full GC at 1.2x what was live) a tenant paging through a big history (~0.4 MB a page)
 * brought a full GC of the loop every ~15 pages, 2-11 ms each, in which every other tenant waited.
 * A slot of one SharedArrayBuffer, made once, is no new memory to V8.
 *
 * `SLAB_SLOTS` slots of `SLAB_SLOT_BYTES`, one `Int32Array` state word per slot: 0 free, 1 held. A
 * worker claims the lowest free slot (`Atomics.compareExchange`, so only slots ever needed at once
 * become resident), copies the answer in and names the slot in its message; the loop lends a view on
 * it (`lent-answers.ts`) and frees the slot once the answer was written (the response finished or
 * closed). An answer under `SLAB_MIN_BYTES` or larger than a slot, or with every slot held, is moved
 * (transferred) as before.
 */

/** Slots of one pool's slab: answers lent at once (more are transferred). */
export const SLAB_SLOTS = 8;
/** Bytes of one slot: a page of 1,000 history events of ~400 bytes each fits. */
export const SLAB_SLOT_BYTES = 1 << 20;

/**
 * Answers smaller than this are moved, not lent: a few KB of external memory is nothing against the GC's
 * limit, and the one-chunk stream a lent answer goes out as costs the loop more than a plain Buffer
 * (bench:memory's 1-client search p99, ~43 results an answer: 1.25x when every answer was lent).
 */
export const SLAB_MIN_BYTES = 64 * 1024;

/** Where a worker put an answer: its slot and its length in bytes. */
export interface SlabRef {
  slot: number;
  length: number;
}

/** The memory a pool and its workers share: the states, then the slots. */
export interface SlabMemory {
  states: SharedArrayBuffer;
  slots: SharedArrayBuffer;
  slotBytes: number;
}

/** Lent answer slots over one `SlabMemory`: the loop's side and the workers' side. */
export class AnswerSlab {
  readonly #states: Int32Array;
  readonly #slots: SharedArrayBuffer;
  readonly #slotBytes: number;

  constructor(memory: SlabMemory) {
    this.#states = new Int32Array(memory.states);
    this.#slots = memory.slots;
    this.#slotBytes = memory.slotBytes;
  }

  /** New shared memory of `slots` free slots of `slotBytes` (the pool makes it once; workers get it). */
  static memory(slots = SLAB_SLOTS, slotBytes = SLAB_SLOT_BYTES): SlabMemory {
    return {
      states: new SharedArrayBuffer(slots * Int32Array.BYTES_PER_ELEMENT),
      slots: new SharedArrayBuffer(slots * slotBytes),
      slotBytes,
    };
  }

  /**
   * Worker side: copies `bytes` into the lowest free slot and holds it.
   * @returns where, or null when they do not fit a slot or every slot is held (send them as they are)
   */
  put(bytes: Uint8Array): SlabRef | null {
    if (bytes.byteLength > this.#slotBytes) return null;
    for (let slot = 0; slot < this.#states.length; slot++) {
      if (Atomics.compareExchange(this.#states, slot, 0, 1) !== 0) continue;
      new Uint8Array(this.#slots, slot * this.#slotBytes, bytes.byteLength).set(bytes);
      return { slot, length: bytes.byteLength };
    }
    return null;
  }

  /** Loop side: the bytes a worker put (a view on the slot: valid until `free`). */
  view(ref: SlabRef): Uint8Array {
    return new Uint8Array(this.#slots, ref.slot * this.#slotBytes, ref.length);
  }

  /** Gives a slot back to the workers (its view must not be read after). */
  free(slot: number): void {
    Atomics.store(this.#states, slot, 0);
  }

  /** Slots held now (tests, `/metrics`). */
  held(): number {
    let n = 0;
    for (let slot = 0; slot < this.#states.length; slot++) n += Atomics.load(this.#states, slot);
    return n;
  }
}
