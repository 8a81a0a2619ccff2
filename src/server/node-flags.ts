/**
 * @module
 * The Node/V8 flags Tether's servers run with, kept in one place: `bin/tether`'s shebang and the
 * Dockerfile's ENTRYPOINT pass them (a test checks both), and bench:memory starts its server child
 * with them, so the memory it measures is the memory a deployment uses.
 */

/**
 * `--max-semi-space-size=4` (MiB): V8's young generation is two semi-spaces that grow to 16 MiB each
 * by default on 64-bit, and under a load of 500-statement requests they did, on top of a ~140 MB
 * baseline (node, tsx's loader and esbuild threads, the modules). Heap snapshots during and after a
 * 10^6-event load over HTTP hold the same ~25 MB: nothing grows without bound, the peak is GC headroom.
 * At 4 MiB the bench's peak RSS fell by 20-30 MB (278 -> 257 MB at 10^6 events) for ~3% more server CPU
 * per remember (173 -> 179 us at 10^5).
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];
