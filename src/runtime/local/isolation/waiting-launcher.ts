/**
 * @module
 * A process started ahead of an instance, already inside its cgroups, waiting on its stdin for the
 * command it becomes. Joining a v1 cgroup (writing `cgroup.procs`) waits for an RCU grace period
 * whenever no other join came just before, which on a cold start costs more than bubblewrap and all
 * the namespaces together (README: Isolation, the bench rows). A launcher made with the spare network
 * slot pays that wait before anyone asks. It is bash (`mapfile -d ''` reads the NUL-separated command;
 * POSIX sh cannot), and it `exec`s what it is given, so its pid, process group and cgroups are the
 * instance's. Used by namespaces-isolation.ts and namespaces-sandbox.ts; without bash the runtime
 * spawns a launcher that joins at start.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { LaunchPlan, OutputFiles } from './sandbox.ts';

/**
 * Joins the cgroups given as arguments (after the path of env), waits for its stdin to end, and then,
 * if it holds a command (`go`, cwd, stdout file, stderr file, n more cgroups to join, those, m env
 * entries, those, argv), becomes it with exactly that environment; a stdin that ends without one
 * means nothing is run.
 */
const SCRIPT = `e=$1; shift
for f in "$@"; do echo $$ > "$f" || exit 125; done
mapfile -d '' -t a || exit 125
[ "\${a[0]}" = go ] || exit 0
cd -- "\${a[1]}" || exit 125
exec >>"\${a[2]}" 2>>"\${a[3]}" </dev/null || exit 125
i=5; n=\${a[4]}
while [ "$n" -gt 0 ]; do echo $$ > "\${a[i]}" || exit 125; i=$((i+1)); n=$((n-1)); done
m=\${a[i]}; i=$((i+1))
exec "$e" -i -- "\${a[@]:i:m}" "\${a[@]:i+m}"`;

/** Tools a launcher runs: bash, and env (which sets the instance's environment, nothing else). */
export interface LauncherTools {
  bash: string;
  env: string;
}

/** One waiting process; `start` or `cancel` it once. */
export class WaitingLauncher {
  /** The `cgroup.procs` files it joined before waiting. */
  readonly joined: readonly string[];
  readonly #child: ChildProcess;
  #used = false;

  private constructor(child: ChildProcess, joined: readonly string[]) {
    this.#child = child;
    this.joined = joined;
  }

  /** Spawns a launcher that joins `procsFiles` (in its own process group, the instance's to be). */
  static spawn(tools: LauncherTools, procsFiles: readonly string[]): WaitingLauncher {
    const child = spawn(tools.bash, ['-c', SCRIPT, 'tether-launcher', tools.env, ...procsFiles], {
      env: {},
      cwd: '/',
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.on('error', () => {}); // a failed spawn shows as not alive: the start spawns its own
    child.stdin?.on('error', () => {}); // it died meanwhile: its exit tells the runtime
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return new WaitingLauncher(child, [...procsFiles]);
  }

  /** True while it waits, unused, and can still become an instance. */
  get alive(): boolean {
    const c = this.#child;
    return !this.#used && c.pid !== undefined && c.exitCode === null && c.signalCode === null && !!c.stdin?.writable;
  }

  /**
   * Makes it `plan` (after joining `alsoJoin` as well), with stdout and stderr appended to `output`.
   * @returns the child process, now the instance's launcher (its pid leads the instance's process group)
   */
  start(plan: LaunchPlan, output: OutputFiles, alsoJoin: readonly string[] = []): ChildProcess {
    if (!this.alive) throw new Error('the waiting launcher is gone');
    const env = Object.entries(plan.env).map(([k, v]) => `${k}=${v}`);
    const words = ['go', plan.cwd, output.out, output.err, String(alsoJoin.length), ...alsoJoin];
    words.push(String(env.length), ...env, plan.file, ...plan.args);
    if (words.some((w) => w.includes('\0'))) throw new Error('a command word or environment entry holds a NUL byte');
    this.#used = true;
    const c = this.#child;
    c.ref();
    c.stdin?.end(`${words.join('\0')}\0`);
    return c;
  }

  /** Lets it exit without running anything. Safe after `start` (then it does nothing). */
  cancel(): void {
    if (this.#used) return;
    this.#used = true;
    this.#child.stdin?.end();
  }

  /** At process exit (synchronous): kills it if it still waits. */
  abandonSync(): void {
    if (this.#used || this.#child.pid === undefined) return;
    try {
      process.kill(this.#child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
