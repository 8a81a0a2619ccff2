/**
 * @module
 * A process started ahead of an instance, already inside its cgroups, waiting on its stdin for the
 * command it becomes. Joining a v1 cgroup (writing `cgroup.procs`) waits for an RCU grace period
 * whenever no other join came just before, which on a cold start costs more than bubblewrap and all
 * the namespaces together (docs/isolation.md, docs/benchmarks.md). A launcher made with the spare network
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
 * entries, those, u `-uNAME` words, those, argv), becomes it with exactly that environment; a stdin
 * that ends without one means nothing is run. The entries are exported by bash itself, so no value is
 * ever in an argv (`/proc/<pid>/cmdline` is world-readable, environ only the owner's). What bash
 * exported on its own (SHLVL, PWD, and whatever the machine's startup files set: listed once, before
 * waiting, as that costs a fork) is un-exported first, and `env` drops what bash adds at exec (`_`, and
 * SHLVL, PWD, OLDPWD again) unless the plan sets it. The script's own names start `__tl_`.
 */
const SCRIPT = `__tl_e=$1; shift
for __tl_f in "$@"; do echo $$ > "$__tl_f" || exit 125; done
__tl_x=$(compgen -e)
mapfile -d '' -t __tl_a || exit 125
[ "\${__tl_a[0]}" = go ] || exit 0
exec >>"\${__tl_a[2]}" 2>>"\${__tl_a[3]}" </dev/null || exit 125
cd -- "\${__tl_a[1]}" || exit 125
__tl_i=5; __tl_n=\${__tl_a[4]}
while [ "$__tl_n" -gt 0 ]; do echo $$ > "\${__tl_a[__tl_i]}" || exit 125; __tl_i=$((__tl_i+1)); __tl_n=$((__tl_n-1)); done
__tl_m=\${__tl_a[__tl_i]}; __tl_i=$((__tl_i+1))
[ -z "$__tl_x" ] || export -n $__tl_x
[ "$__tl_m" -eq 0 ] || export -- "\${__tl_a[@]:__tl_i:__tl_m}" || exit 125
__tl_i=$((__tl_i+__tl_m)); __tl_u=\${__tl_a[__tl_i]}; __tl_i=$((__tl_i+1))
exec "$__tl_e" "\${__tl_a[@]:__tl_i:__tl_u}" -- "\${__tl_a[@]:__tl_i+__tl_u}"`;

/** What bash puts in the environment of what it runs, unless the plan sets it. */
const BASH_ADDS = ['SHLVL', 'PWD', 'OLDPWD', '_'];

/**
 * Names bash cannot export as given: not an identifier, read-only or dynamic in bash (its value would
 * not be the plan's), or the script's own. A plan with one is launched the other way (`sh`).
 */
const NOT_EXPORTABLE =
  /^(?![A-Za-z_][A-Za-z0-9_]*$)|^(BASH.*|SHELLOPTS|EUID|UID|PPID|RANDOM|SRANDOM|SECONDS|LINENO|HISTCMD|EPOCHSECONDS|EPOCHREALTIME|FUNCNAME|GROUPS|DIRSTACK|COMP_WORDBREAKS|POSIXLY_CORRECT|IFS|_|__tl_.*)$/;

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

  /** True when `start` can give a command exactly this environment (see `NOT_EXPORTABLE`). */
  static accepts(env: Readonly<Record<string, string>>): boolean {
    return Object.keys(env).every((k) => !NOT_EXPORTABLE.test(k));
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
    if (!WaitingLauncher.accepts(plan.env)) throw new Error('an environment name bash cannot export as given');
    if (plan.file.includes('=')) throw new Error(`a command path with '=' (env would take it for a variable)`);
    const env = Object.entries(plan.env).map(([k, v]) => `${k}=${v}`);
    const unset = BASH_ADDS.filter((k) => !(k in plan.env)).map((k) => `-u${k}`);
    const words = ['go', plan.cwd, output.out, output.err, String(alsoJoin.length), ...alsoJoin];
    words.push(String(env.length), ...env, String(unset.length), ...unset, plan.file, ...plan.args);
    if (words.some((w) => w.includes('\0'))) {
      // The code Node's spawn gives the same mistake; the message names no value (it may be a secret).
      throw Object.assign(new Error('a command word or environment entry holds a NUL byte'), {
        code: 'ERR_INVALID_ARG_VALUE',
      });
    }
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
    const c = this.#child;
    // Not once it exited: its pid may be another process's by now.
    if (this.#used || c.pid === undefined || c.exitCode !== null || c.signalCode !== null) return;
    try {
      process.kill(c.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
