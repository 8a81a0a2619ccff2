/**
 * @module
 * The web console's static files (src/console/: plain ES modules, no build step), read once and served
 * by both hosts: the memory server (server/routes/console.ts) and the gateway admin port
 * (gateway/admin-server.ts). Only files that exist in that folder are served; the headers keep the page
 * from loading anything but its own files, since it holds an admin key in its session.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';

/** Where the console's files are. */
export const CONSOLE_DIR = join(import.meta.dirname, '..', 'console');

/** The path every console file is served under. */
export const CONSOLE_PREFIX = '/console/';

/** One served file. */
export interface ConsoleAsset {
  body: Buffer;
  type: string;
}

/** What a console page may talk to: each API's base URL path on the console's own origin, or null if absent. */
export interface ConsoleConfig {
  /** The memory API (`/v1/...`), e.g. '' for the same server. */
  memory: string | null;
  /** The gateway admin API (`/_tether/...`), e.g. '' on the admin port or '/console/gateway' through the memory server. */
  gateway: string | null;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
};

/** Response headers of every console file: its own origin only, no framing, no sniffing. */
export const CONSOLE_HEADERS = Object.freeze({
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
});

let assets: Map<string, ConsoleAsset> | undefined;

function load(): Map<string, ConsoleAsset> {
  const files = new Map<string, ConsoleAsset>();
  for (const entry of readdirSync(CONSOLE_DIR, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    const type = TYPES[extname(entry.name)];
    if (!type) continue;
    files.set(relative(CONSOLE_DIR, full).split(sep).join('/'), { body: readFileSync(full), type });
  }
  return files;
}

/**
 * The asset of a request path under `/console/` (`/console/` itself is index.html), or undefined.
 * @example consoleAsset('/console/app.js')
 */
export function consoleAsset(path: string): ConsoleAsset | undefined {
  if (!path.startsWith(CONSOLE_PREFIX)) return undefined;
  assets ??= load();
  const name = path.slice(CONSOLE_PREFIX.length) || 'index.html';
  return assets.get(name);
}

/** The config document a console page reads first (`/console/config.json`). */
export function consoleConfigAsset(config: ConsoleConfig): ConsoleAsset {
  return { body: Buffer.from(JSON.stringify(config)), type: TYPES['.json'] as string };
}
