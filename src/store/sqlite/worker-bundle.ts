/**
 * @module
 * The read workers' code when Tether runs from its TypeScript sources (tests, `TETHER_FROM_SOURCE=1`,
 * the benches). A worker that registered tsx itself got a loader thread of its own from Node 20, with
 * tsx and esbuild loaded in it: two read workers cost ~55 MB of resident memory that way (bench:memory's
 * peak RSS at 10^6 events: 323 vs 253 MB before the pool). Here the worker's entry and the fold module
 * are bundled once per process into plain ES modules by esbuild (tsx's own compiler, so present wherever
 * a .ts entry runs), which the worker imports as data: URLs. A compiled build (.js) never comes here.
 */
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface EsbuildSync {
  buildSync(options: Record<string, unknown>): { outputFiles: { text: string }[] };
}

/** Bundles already made in this process, by the URL of their entry. */
const made = new Map<string, string>();

/** The only package the worker's entry loads: native, so it stays outside the bundle, imported by path. */
const DRIVER = 'better-sqlite3';

function esbuild(): EsbuildSync {
  const fromTsx = createRequire(fileURLToPath(import.meta.resolve('tsx/esm/api')));
  return fromTsx('esbuild') as EsbuildSync;
}

/** `entry` and everything it imports but the driver, as one ES module in a data: URL. */
function bundle(entry: string): string {
  const known = made.get(entry);
  if (known) return known;
  const [out] = esbuild().buildSync({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: [DRIVER],
    write: false,
    logLevel: 'silent',
  }).outputFiles;
  // A data: URL resolves no bare name: the driver's import names its file instead.
  const driver = pathToFileURL(createRequire(import.meta.url).resolve(DRIVER)).href;
  const bare = new RegExp(`from\\s*"${DRIVER}"`, 'g');
  const text = out?.text ?? '';
  if (new RegExp(`from\\s*"(?!node:|${DRIVER}")[^./]`).test(text)) {
    throw new Error(`Cannot start the read workers as ${entry} imports a package other than ${DRIVER}`);
  }
  const code = text.replace(bare, `from ${JSON.stringify(driver)}`);
  const url = `data:text/javascript,${encodeURIComponent(code)}`;
  made.set(entry, url);
  return url;
}

/** The URL a worker thread starts from or imports: `url` itself unless it is TypeScript source. */
export function workerLoadable(url: string): string {
  return url.startsWith('file:') && fileURLToPath(url).endsWith('.ts') ? bundle(url) : url;
}
