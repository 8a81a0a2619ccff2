/**
 * @module
 * The Node/V8 flags Tether's servers run with, kept in one place: `bin/tether`'s shebang and the
 * Dockerfile's ENTRYPOINT pass them (a test checks both), and bench:memory starts its server child
 * with them, so the memory it measures is the memory a deployment uses.
 */

/**
 * `--optimize-for-size`: V8 keeps its heaps small instead of fast to grow. Under bench:memory's load
 * (500-statement requests, 4 in flight) request objects outlive a young-generation GC or two and are
 * promoted, and with the default heuristics the main isolate's old space then grew to 140-160 MB of
 * committed heap for ~50 MB live before a full GC ran (the first full GC waits for a limit set from
 * the maximum heap, 4 GB here, lowered only by the survival rate). With this flag V8 collects the old
 * space sooner and sizes it to what is live, and it implies 1 MiB semi-spaces (it overrides any
 * `--max-semi-space-size`, which is why the 4 MiB flag this replaces is gone). Measured
 * (docs/benchmarks.md, "Memory of a server process"): at 2*10^4 statements the peak fell from 265 to
 * 174 MB, the main heap from 151 to 60 MB committed.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--optimize-for-size'];
