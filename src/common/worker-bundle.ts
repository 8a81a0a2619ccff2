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

interface Bundled {
  outputFiles: { text: string }[];
}

interface Esbuild {
  buildSync(options: Record<string, unknown>): Bundled;
  build(options: Record<string, unknown>): Promise<Bundled>;
}

/** Bundles already made in this process, by the URL of their entry. */
const made = new Map<string, string>();

function esbuild(): Esbuild {
  const fromTsx = createRequire(fileURLToPath(import.meta.resolve('tsx/esm/api')));
  return fromTsx('esbuild') as Esbuild;
}

function buildOptions(entry: string, external: string | null): Record<string, unknown> {
  return {
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: external === null ? [] : [external],
    write: false,
    logLevel: 'silent',
  };
}

/** The bundle `out` of `entry` as a data: URL (kept for the process). */
function loadable(entry: string, external: string | null, out: Bundled): string {
  const text = out.outputFiles[0]?.text ?? '';
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

const isSource = (url: string) => url.startsWith('file:') && fileURLToPath(url).endsWith('.ts');

/**
 * The URL a worker thread starts from or imports: `url` itself unless it is TypeScript source, else its
 * bundle, made here on the event loop (~0.1-0.3 s the first time: for workers started with a server).
 * @param external the one package the code may import (native, so left outside the bundle), if any
 */
export function workerLoadable(url: string, external: string | null = null): string {
  if (!isSource(url)) return url;
  return made.get(url) ?? loadable(url, external, esbuild().buildSync(buildOptions(url, external)));
}

/**
 * `workerLoadable`, with a bundle made by esbuild's own process while the event loop goes on: for a
 * worker started by a request, which must not hold every other request for the bundle.
 */
export async function workerLoadableSoon(url: string, external: string | null = null): Promise<string> {
  if (!isSource(url)) return url;
  return made.get(url) ?? loadable(url, external, await esbuild().build(buildOptions(url, external)));
}
