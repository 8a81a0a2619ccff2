/**
 * A demo agent for `tether up`: each request is a "turn". It proves who it is with the workload token
 * the platform mounted (TETHER_TOKEN_FILE), recalls what it noted in earlier turns — also turns served
 * by an earlier instance of the same session — and notes this one. Answers JSON.
 * Run by the gateway as `node --import tsx server.ts` with PORT, TETHER_URL and TETHER_TOKEN_FILE set.
 */
import { createServer } from 'node:http';
import { TetherClient } from '../../src/sdk/client.ts';

const { PORT = '8080', TETHER_URL, TETHER_TOKEN_FILE, TETHER_INSTANCE = 'local' } = process.env;
if (!TETHER_URL || !TETHER_TOKEN_FILE) {
  process.stderr.write('memory-agent needs TETHER_URL and TETHER_TOKEN_FILE (run it under `tether up`)\n');
  process.exit(1);
}
// The key is fetched lazily: while this instance waits in the warm pool it has no key ("still in warm pool").
const memory = TetherClient.fromWorkloadToken({ url: TETHER_URL, tokenFile: TETHER_TOKEN_FILE });
let turns = 0;

createServer(async (req, res) => {
  if (req.url !== '/') {
    res.writeHead(404).end();
    return;
  }
  try {
    const me = await memory.whoami();
    const { beliefs } = await memory.recall({ subject: 'conversation', predicate: 'note', limit: 1000 });
    turns++;
    await memory.remember({
      subject: 'conversation',
      predicate: 'note',
      value: `turn ${beliefs.length + 1} served by ${TETHER_INSTANCE}`,
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      `${JSON.stringify({
        agent: me.agent,
        namespace: me.namespace,
        instance: TETHER_INSTANCE,
        pid: process.pid,
        turns_in_this_process: turns,
        remembered: beliefs.map((b) => b.value),
      })}\n`,
    );
  } catch (err) {
    const e = err as { status?: number; code?: string; message: string };
    res.writeHead(e.status && e.status < 500 ? 502 : 503, { 'content-type': 'application/json' });
    res.end(`${JSON.stringify({ error: { code: e.code ?? 'unavailable', message: e.message } })}\n`);
  }
}).listen(Number(PORT), '127.0.0.1');
