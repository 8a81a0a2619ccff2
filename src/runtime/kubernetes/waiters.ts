/**
 * @module
 * Waiting by watch: each waiter is a check re-run whenever an informer reports a change (`check()`),
 * resolved with the first value it returns, rejected when it throws, on its timeout, or by `rejectAll`.
 * No polling. Used by `kubernetes-runtime.ts`.
 */

interface Waiter {
  run: () => void;
  fail: (err: Error) => void;
}

/** Pending waits on observed cluster state. */
export class Waiters {
  readonly #pending = new Set<Waiter>();

  /**
   * Resolves with the first non-undefined value of `check`, run now and after every `check()` call.
   * @throws Error `<what> not within <ms> ms` on timeout, or what `check` threw
   */
  until<T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => w.fail(new Error(`${what}: not within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        this.#pending.delete(w);
      };
      const w: Waiter = {
        run: () => {
          let v: T | undefined;
          try {
            v = check();
          } catch (err) {
            w.fail(err as Error);
            return;
          }
          if (v === undefined) return;
          done();
          resolve(v);
        },
        fail: (err) => {
          done();
          reject(err);
        },
      };
      this.#pending.add(w);
      w.run();
    });
  }

  /** Re-runs every pending check (after a watch event). */
  check(): void {
    for (const w of [...this.#pending]) w.run();
  }

  /** Rejects every pending wait. */
  rejectAll(err: Error): void {
    for (const w of [...this.#pending]) w.fail(err);
  }
}
