/**
 * @module
 * The Node/V8 flags Tether's servers run with, kept in one place: `bin/tether`'s shebang and the
 * Dockerfile's ENTRYPOINT pass them (a test checks both), and bench:memory starts its server child
 * with them, so the memory it measures is the memory a deployment uses.
 */

/**
 * The memory bound (peak RSS <= 300 MB under bench:memory's load): the peak was the main isolate's
 * old-space garbage. 500-statement requests (4 in flight) outlive a scavenge or two and are promoted, and
 * V8's first full GC waits for a limit set from the maximum heap (4 GB here), lowered only by the
 * survival rate: 150-170 MB of committed heap for ~50-60 MB live.
 * - `--max-semi-space-size=4` (MiB): the young generation's two semi-spaces stay small (16 MiB each by
 *   default).
 * - `--initial-old-space-size=32` (MiB): the first full GC comes at 32 MiB of old space, not hundreds.
 * - `--heap-growing-percent=20`: after each full GC the next limit is live x 1.2 (V8's factor is up to 4).
 * Measured (docs/benchmarks.md, "Where the peak's bytes are"): at 3*10^4 statements the peak fell from
 * 274 to 203 MB for the same server CPU per statement (169 vs 167 us). `--optimize-for-size` reached
 * 174-197 MB but doubled the CPU per statement (it implies 1 MiB semi-spaces).
 */
export const SERVER_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=4',
  '--initial-old-space-size=32',
  '--heap-growing-percent=20',
];
