/**
 * Answers lent from the read workers' slab (issue 21): a history page sent from a slab slot keeps its
 * slot until the response finished, so clients that stop reading while other requests take and give
 * back the other slots still get their own answer byte for byte; once every answer is read, every slot
 * is free again, also when clients go away (with every slot held answers are moved:
 * `test/store/sqlite/answer-slab.test.ts`). Over real sockets: what is
 * tested is when the socket is done with the bytes.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { answerWritten } from '../../src/store/lent-answers.ts';
import { SLAB_SLOTS } from '../../src/store/sqlite/answer-slab.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let key: string;
let store: SqliteStore;
/** Facts of 1,000 values of ~200 bytes: each whole page (~0.75 MB, a value is in it twice) fits a slot and outgrows the sockets' buffers. */
const FACTS = 4;
const subjectOf = (f: number) => `big-${f}`;
const pagePath = (f: number) => `/v1/memories/history?subject=${subjectOf(f)}&predicate=note&limit=1000`;

before(async () => {
  srv = await startTestMemoryServer();
  store = srv.running.store as unknown as SqliteStore;
  key = await srv.agentKey('lent', 'run-1');
  for (let f = 0; f < FACTS; f++) {
    for (const half of [0, 1]) {
      const statements = Array.from({ length: 500 }, (_, i) => ({
        subject: subjectOf(f),
        predicate: 'note',
        value: `f${f}-${half}-${i} ${'x'.repeat(200)}`,
      }));
      const r = await srv.call('POST', '/v1/memories', { key, body: { statements } });
      assert.equal(r.status, 200, r.text);
    }
  }
});
after(() => srv.close());
const slotsHeld = () => store.lentAnswerStats().slotsHeld;
const lentSoFar = () => store.lentAnswerStats().lent;

/**
 * `count` GETs sent at once on one connection (pipelined) whose answers are not read until `read`:
 * a few fill the sockets' buffers and the next waits in the server, its bytes still to be written.
 */
async function stalled(paths: string[]): Promise<{ socket: Socket; read: () => Promise<Answer[]> }> {
  const url = new URL(srv.url);
  const socket = connect(Number(url.port), url.hostname);
  await once(socket, 'connect');
  socket.pause();
  const host = `${url.hostname}:${url.port}`;
  socket.write(paths.map((p) => `GET ${p} HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${key}\r\n\r\n`).join(''));
  return {
    socket,
    read: async () => {
      const chunks: Buffer[] = [];
      const answers: Answer[] = [];
      let buffered = Buffer.alloc(0);
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.resume();
      while (answers.length < paths.length) {
        buffered = Buffer.concat([buffered, ...chunks.splice(0)]);
        const parsed = nextAnswer(buffered);
        if (parsed) {
          answers.push(parsed.answer);
          buffered = buffered.subarray(parsed.used);
        } else await once(socket, 'data'); // the listener above keeps the chunk
      }
      socket.destroy();
      return answers;
    },
  };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One HTTP/1.1 answer with a content-length from the front of `buf`, or null when it has not all come. */
function nextAnswer(buf: Buffer): { answer: Answer; used: number } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  const length = Number(headers['content-length']);
  assert.ok(Number.isInteger(length), `every answer has a content-length: ${statusLine}`);
  if (buf.length < end + 4 + length) return null;
  const body = buf.subarray(end + 4, end + 4 + length).toString('utf8');
  return { answer: { status: Number(statusLine?.split(' ')[1]), headers, body }, used: end + 4 + length };
}

/** Each answer is the page of its fact, byte for byte (a mismatch names where, not the megabytes). */
function same(answers: Answer[], facts: number[], expected: string[], what: string): void {
  assert.equal(answers.length, facts.length, what);
  for (const [i, a] of answers.entries()) {
    const want = expected[facts[i] as number] as string;
    if (a.body === want) continue;
    let at = 0;
    while (at < want.length && a.body[at] === want[at]) at++;
    assert.fail(
      `${what}, answer ${i} (status ${a.status}, ${a.body.length} of ${want.length} characters) differs at ${at}: ${JSON.stringify(a.body.slice(Math.max(0, at - 40), at + 80))}`,
    );
  }
}

/** Waits (bounded by the test's timeout, never by a timer's guess) until the condition holds. */
async function until(ok: () => boolean): Promise<void> {
  while (!ok()) await sleep(5);
}

/** Pages each stalled connection asks for: more than its socket's buffers hold (~4 MB here). */
const PIPELINED = 8;
const pagesFor = (c: number) => Array.from({ length: PIPELINED }, (_, r) => (c + r) % FACTS);

describe("answers lent from the read workers' slab", () => {
  it('keeps a slot until its answer was written, while other answers take and give back the others', {
    timeout: 120_000,
  }, async () => {
    // What every page is: read whole, one at a time, before anything stalls.
    const expected: string[] = [];
    for (let f = 0; f < FACTS; f++) {
      const r = await srv.call('GET', pagePath(f), { key });
      assert.equal(r.status, 200, r.text);
      assert.equal((JSON.parse(r.text) as { events: unknown[] }).events.length, 1000);
      expected.push(r.text);
    }
    await until(() => slotsHeld() === 0);
    assert.ok(lentSoFar() >= FACTS, `every whole page was lent (${lentSoFar()})`);

    // Connections that stop reading: the answers that wait in the server hold their slots (how many
    // depends on the sockets' buffers; all 8 requests of a connection are parsed at once).
    const stalls = [];
    for (let c = 0; c < SLAB_SLOTS / 2; c++) stalls.push(await stalled(pagesFor(c).map(pagePath)));
    await until(() => slotsHeld() > 0);

    // Meanwhile other clients: their answers take the free slots (or are moved when none is), each right.
    const lentBefore = lentSoFar();
    for (let round = 0; round < 3; round++) {
      const churn = await Promise.all(
        Array.from({ length: 8 }, (_, i) => srv.call('GET', pagePath(i % FACTS), { key })),
      );
      for (const [i, r] of churn.entries()) assert.equal(r.text, expected[i % FACTS], `churn ${round}.${i}`);
    }
    assert.ok(lentSoFar() > lentBefore, 'answers were lent while others waited in their slots');

    // The stalled connections get their own bytes, untouched by the answers lent meanwhile.
    for (const [c, stall] of stalls.entries()) {
      const answers: Answer[] = await stall.read();
      same(answers, pagesFor(c), expected, `connection ${c}`);
      for (const a of answers) assert.equal(a.headers['transfer-encoding'], undefined);
    }
    await until(() => slotsHeld() === 0);
  });

  it('gives every slot back when a client that stopped reading goes away', { timeout: 60_000 }, async () => {
    const lentBefore = lentSoFar();
    const { socket } = await stalled(pagesFor(0).map(pagePath));
    // Every page read and lent: those past what the sockets' buffers took wait in their slots, queued
    // behind the one being written (responses that never got the socket).
    await until(() => lentSoFar() >= lentBefore + PIPELINED);
    await until(() => slotsHeld() > 1);
    socket.destroy();
    await until(() => slotsHeld() === 0);
    const r = await srv.call('GET', pagePath(0), { key });
    assert.equal((JSON.parse(r.text) as { events: unknown[] }).events.length, 1000);
  });

  it('gives a slot back at once when its client went away while its read ran', { timeout: 60_000 }, async () => {
    const lentBefore = lentSoFar();
    const { socket } = await stalled(pagesFor(0).map(pagePath));
    await until(() => slotsHeld() > 0);
    socket.destroy();
    // The pages still being read are lent after the socket closed; none keeps its slot.
    await until(() => lentSoFar() >= lentBefore + PIPELINED);
    await until(() => slotsHeld() === 0);
  });

  it('shows the answers lent and the slots held on /metrics', { timeout: 60_000 }, async () => {
    await until(() => slotsHeld() === 0);
    const metrics = async () => (await srv.call('GET', '/metrics')).text;
    const idle = await metrics();
    assert.match(idle, /^tether_read_answer_slots_held 0$/m);
    const lent = Number(/^tether_read_answers_lent_total (\d+)$/m.exec(idle)?.[1]);
    assert.ok(lent >= 1 && lent <= lentSoFar(), `lent total ${lent} of ${lentSoFar()}`);
    // A page lent and not written yet holds its slot. Taken from the store and kept here, not from a
    // stalled socket: how much a socket's buffers take (and so whether an answer still waits) is the
    // kernel's choice, and the slot count would race it.
    const rendered = store.renderedReads();
    assert.ok(rendered, 'the store lends rendered answers');
    const page = await rendered.historyPage({
      namespace: 'lent:run-1',
      groups: [{ subject: subjectOf(1), predicate: 'note' }],
      limit: 1000,
    });
    assert.equal(lentSoFar(), lent + 1, 'the page was lent from a slot');
    assert.match(await metrics(), /^tether_read_answer_slots_held 1$/m);
    answerWritten(page);
    const released = await metrics();
    assert.match(released, /^tether_read_answer_slots_held 0$/m);
    assert.match(released, new RegExp(`^tether_read_answers_lent_total ${lent + 1}$`, 'm'));
  });
});
