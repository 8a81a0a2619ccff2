/**
 * @module
 * Thaws this gateway's frozen instances when the gateway dies without closing (SIGKILL, OOM kill). A
 * process in a frozen cgroup acts on no signal, so the SIGKILL bubblewrap's `--die-with-parent` asks
 * for stays pending and a paused instance would outlive its gateway. A small `sh`, in a session of its
 * own (a kill of the gateway's process group misses it) and outside every instance cgroup, is told
 * over a pipe which freezer file each instance uses before it is first frozen. At EOF, when the gateway
 * is gone whatever ended it, the watchdog thaws them all. The pending kills then land and it exits; the
 * next gateway reaps what is left (namespaces-isolation.ts). A graceful close kills the watchdog first,
 * so it thaws nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Reads `<value> <file>` lines until EOF (with builtins only: no child to outlive it), then writes each
 * value to its file (those still there).
 */
const SCRIPT = `list=''
while IFS= read -r line; do list="$list
$line"; done
printf '%s\\n' "$list" | while read -r v f; do [ -n "$f" ] && [ -e "$f" ] && printf '%s' "$v" > "$f"; done 2>/dev/null
exit 0`;

/** One watchdog per isolation runtime, started with the first instance it is told of. */
export class ThawWatchdog {
  #child: ChildProcess | null = null;
  #closed = false;
  readonly #told = new Set<string>();

  /** Has `value` written to `file` if this process dies without `close()` (once per file). */
  watch(file: string, value: string): void {
    if (this.#closed || this.#told.has(file) || /[\n\r]/.test(file)) return;
    this.#told.add(file);
    const child = this.#start();
    child.stdin?.write(`${value} ${file}\n`);
  }

  /** True while the watchdog runs (tests). */
  get pid(): number | undefined {
    return this.#child?.exitCode === null ? this.#child.pid : undefined;
  }

  /** Stops the watchdog without thawing anything (the runtime thaws and deletes its instances itself). */
  close(): void {
    this.#closed = true;
    const child = this.#child;
    this.#child = null;
    if (!child?.pid) return;
    try {
      process.kill(-child.pid, 'SIGKILL'); // its whole group (it is detached): the pipeline's subshell too
    } catch {
      // gone already
    }
    child.stdin?.destroy();
  }

  #start(): ChildProcess {
    if (this.#child && this.#child.exitCode === null && this.#child.signalCode === null) return this.#child;
    const child = spawn('sh', ['-c', SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    // Neither the process nor its pipe keeps the event loop alive; a write to a watchdog that died is dropped.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    child.stdin?.on('error', () => {});
    child.on('error', () => {});
    this.#child = child;
    return child;
  }
}
