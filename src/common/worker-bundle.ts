/**
 * @module
 * Worker threads' code when Tether runs from its TypeScript sources (tests, `TETHER_FROM_SOURCE=1`,
 * the benches). A worker that registered tsx itself got a loader thread of its own from Node 20, with
 * tsx and esbuild loaded in it: two read workers cost ~55 MB of resident memory that way (bench:memory's
 * peak RSS at 10^6 events: 323 vs 253 MB before the pool). Here a worker's entry and the modules it
 * loads are bundled once per process into plain ES modules by esbuild (tsx's own compiler, so present
 * wherever a .ts entry runs), which the worker imports as data: URLs. A compiled build (.js) never comes
 * here. Used by the SQLite read pool and the import worker.
 */
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface EsbuildSync {
  buildSync(options: Record<string, unknown>): { outputFiles: { text: string }[] };
}

/** Bundles already made in this process, by the URL of their entry. */
const made = new Map<string, string>();

function esbuild(): EsbuildSync {
  const fromTsx = createRequire(fileURLToPath(import.meta.resolve('tsx/esm/api')));
  return fromTsx('esbuild') as EsbuildSync;
}

/** `entry` and everything it imports but the `external` package, as one ES module in a data: URL. */
function bundle(entry: string, external: string | null): string {
  const known = made.get(entry);
  if (known) return known;
  const [out] = esbuild().buildSync({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: external === null ? [] : [external],
    write: false,
    logLevel: 'silent',
  }).outputFiles;
  const text = out?.text ?? '';
  if (new RegExp(`from\\s*"(?!node:${external === null ? '' : `|${external}"`})[^./]`).test(text)) {
    throw new Error(`Cannot start a worker thread as ${entry} imports a package other than ${external ?? 'node:'}`);
  }
  // A data: URL resolves no bare name: the external package's import names its file instead.
  const code =
    external === null
      ? text
      : text.replace(
          new RegExp(`from\\s*"${external}"`, 'g'),
          `from ${JSON.stringify(pathToFileURL(createRequire(import.meta.url).resolve(external)).href)}`,
        );
  const url = `data:text/javascript,${encodeURIComponent(code)}`;
  made.set(entry, url);
  return url;
}

/**
 * The URL a worker thread starts from or imports: `url` itself unless it is TypeScript source, else its
 * bundle, made on the event loop once per process (~0.1-0.3 s: made as a server starts).
 * @param external the one package the code may import (native, so left outside the bundle), if any
 */
export function workerLoadable(url: string, external: string | null = null): string {
  return url.startsWith('file:') && fileURLToPath(url).endsWith('.ts') ? bundle(url, external) : url;
}
