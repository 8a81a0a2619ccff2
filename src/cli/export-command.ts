/**
 * @module
 * `tether export` (NDJSON to stdout) and `tether import` (NDJSON file or stdin to a server), each with
 * progress on stderr and one summary line at the end. Import sends batches under the server's 1 MiB
 * body limit. Failures exit with the code of the API's status (api-client.ts `EXIT`).
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { CliError, EXIT, exitCodeOf, memoryKeyOf } from './api-client.ts';
import { createProgress } from './progress.ts';

const BATCH_BYTES = 900 * 1024;

interface ClientFlags {
  url: string;
  key?: string;
  namespace?: string;
}

function keyOf(flags: ClientFlags): string {
  return memoryKeyOf({ url: flags.url, key: flags.key });
}

/**
 * The CLI error for a failed response.
 * @param fileLines for an import batch, the file line of each of its lines: the server names a bad
 *   line by its place in the batch (`line 2`), which is turned into its place in the file
 */
async function failOf(res: Response, fileLines?: readonly number[]): Promise<CliError> {
  const text = await res.text();
  let message = text.slice(0, 200);
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error) message = `${body.error.code}: ${body.error.message}`;
  } catch {}
  if (fileLines) message = message.replace(/\bline (\d+)\b/, (_all, n) => `line ${fileLines[Number(n) - 1] ?? n}`);
  return new CliError(`${res.status} ${message}`, exitCodeOf(res.status));
}

/** fetch, with an unreachable server as exit code `unavailable`. */
async function call(url: URL, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw new CliError(`cannot reach ${url.origin} (${cause}): is the server running?`, EXIT.unavailable);
  }
}

/** Registers `tether export` and `tether import`. */
export function registerExportCommands(program: Command): void {
  program
    .command('export')
    .description('export events as NDJSON to stdout')
    .option('--url <url>', 'memory server URL (TETHER_URL)', process.env.TETHER_URL ?? 'http://127.0.0.1:8080')
    .option('--key <key>', 'API key (default: TETHER_KEY, else .tether/memory/admin.key)')
    .option('--namespace <ns>', 'one namespace (default: the key’s own, or every namespace an admin reaches)')
    .option('--since <id>', 'only events after this event: the last id of the previous export')
    .action(async (flags: ClientFlags & { since?: string }) => {
      const url = new URL('/v1/events', flags.url);
      if (flags.namespace) url.searchParams.set('namespace', flags.namespace);
      if (flags.since) url.searchParams.set('since', flags.since);
      const res = await call(url, { headers: { authorization: `Bearer ${keyOf(flags)}` } });
      if (!res.ok || !res.body) throw await failOf(res);
      const progress = createProgress({ label: 'export', unit: 'events' });
      const decoder = new TextDecoder();
      for await (const chunk of res.body) {
        const text = decoder.decode(chunk as Uint8Array, { stream: true });
        // events counted, not the registry version lines an export also carries
        let n = 0;
        for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
        for (let i = text.indexOf('{"registry_version"'); i >= 0; i = text.indexOf('{"registry_version"', i + 1)) n--;
        progress.tick(n);
        if (!process.stdout.write(text)) await new Promise((r) => process.stdout.once('drain', r));
      }
      progress.done();
      process.stderr.write(`exported ${progress.count} events in ${progress.elapsedSeconds().toFixed(1)} s\n`);
    });

  program
    .command('import')
    .description('import NDJSON events (admin key)')
    .argument('[file]', 'NDJSON file (default: stdin)')
    .option('--url <url>', 'memory server URL (TETHER_URL)', process.env.TETHER_URL ?? 'http://127.0.0.1:8080')
    .option('--key <key>', 'admin API key (default: TETHER_KEY, else .tether/memory/admin.key)')
    .action(async (file: string | undefined, flags: ClientFlags) => {
      const key = keyOf(flags);
      const input = file ? createReadStream(file) : process.stdin;
      const total = file ? statSync(file).size : undefined;
      const progress = createProgress({ label: 'import', total, unit: 'bytes' });
      let batch: string[] = [];
      let batchLines: number[] = [];
      let lineNo = 0;
      let bytes = 0;
      let imported = 0;
      let skipped = 0;
      const send = async () => {
        if (batch.length === 0) return;
        const res = await call(new URL('/v1/events/import', flags.url), {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' },
          body: `${batch.join('\n')}\n`,
        });
        if (!res.ok) {
          const fail = await failOf(res, batchLines);
          if (imported + skipped === 0) throw fail;
          const before = `${imported} events imported and ${skipped} skipped before it`;
          throw new CliError(`${fail.message} (${before})`, fail.exitCode);
        }
        const r = (await res.json()) as { imported: number; skipped: number };
        imported += r.imported;
        skipped += r.skipped;
        progress.tick(bytes);
        batch = [];
        batchLines = [];
        bytes = 0;
      };
      for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
        lineNo++;
        if (line.trim() === '') continue;
        const size = Buffer.byteLength(line) + 1;
        if (bytes + size > BATCH_BYTES) await send();
        batch.push(line);
        batchLines.push(lineNo);
        bytes += size;
      }
      await send();
      progress.done();
      process.stderr.write(
        `imported ${imported} events, skipped ${skipped} already present, in ${progress.elapsedSeconds().toFixed(1)} s\n`,
      );
    });
}
