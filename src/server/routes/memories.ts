/**
 * @module
 * Memory routes: remember, recall (exact or text search, as_of), history, forget. Each declares its
 * schemas (validation, handler types, OpenAPI) and calls the memory call the MCP tool calls too.
 * Recall and history send the answer's bytes as a read worker built them when the store can
 * (`…Text` calls): the same JSON, without the event loop mapping and serializing every row.
 */
import { finished, Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AnswerBytes } from '../../store/answer-text-port.ts';
import { answerWritten } from '../../store/lent-answers.ts';
import type { MemoryCalls } from '../calls/memory-calls.ts';
import {
  forgetAnswer,
  forgetBody,
  historyAnswer,
  historyQuery,
  recallAnswer,
  recallQuery,
  rememberAnswer,
  rememberBody,
  rememberSliced,
} from '../schemas/memories.ts';
import { slicedBodyHook } from '../sliced-body.ts';
import { SLICED_FROM_ITEMS, slicedJsonList } from '../sliced-json.ts';
import type { ZodTypeProvider } from '../zod-routes.ts';

/** The content type Fastify gives a JSON object answer: the same for finished bytes. */
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends finished answer bytes as they are (no serializer runs on them). The store may have lent them
 * (a read worker's slab slot, on a SharedArrayBuffer): they are given back once the response finished
 * (handed to the OS whole) or its connection closed, never while the socket may still read them. The
 * connection too: the answer to a pipelined request queued behind a stalled one is never written and
 * never closes when the client goes away; only its socket does, and one that closed while the read
 * ran closes no more. Fastify sends a Buffer as is only on an ArrayBuffer, so lent bytes go as a
 * one-chunk stream of known length.
 */
function sendBytes(reply: FastifyReply, bytes: AnswerBytes) {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  reply.type(JSON_TYPE);
  if (bytes.buffer instanceof ArrayBuffer) return reply.send(body);
  const socket = reply.request.raw.socket;
  const giveBack = () => {
    socket.off('close', giveBack);
    answerWritten(bytes);
  };
  // The client may have gone while the read ran: its socket closed already, so wait for nothing.
  if (socket.destroyed) giveBack();
  else {
    socket.once('close', giveBack);
    finished(reply.raw, giveBack);
  }
  return reply.header('content-length', body.byteLength).send(Readable.from([body], { objectMode: false }));
}

export async function memoryRoutes(app: FastifyInstance, opts: { calls: MemoryCalls }): Promise<void> {
  const { calls } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v1/memories',
    {
      // A batch of many statements is checked in slices, not in one go (sliced-body.ts).
      config: { slicedBody: rememberSliced },
      preValidation: slicedBodyHook,
      schema: {
        summary: 'Remember one fact or a batch',
        body: rememberBody,
        response: { 200: rememberAnswer },
      },
    },
    async (req, reply) => {
      const answer = await calls.remember(req.auth, req.body);
      // A big batch's answer (~500 bytes a result) is stringified and written a slice at a time.
      if ('results' in answer && answer.results.length >= SLICED_FROM_ITEMS) {
        const body = slicedJsonList('results', answer.results, req.lane);
        return reply.type('application/json; charset=utf-8').send(body as unknown as typeof answer);
      }
      return answer;
    },
  );

  r.get(
    '/v1/memories',
    {
      schema: {
        summary: 'Recall by subject/predicate, or text search with q',
        querystring: recallQuery,
        response: { 200: recallAnswer },
      },
    },
    async (req, reply) => {
      const bytes = await calls.recallText(req.auth, req.query);
      return bytes ? sendBytes(reply, bytes) : calls.recall(req.auth, req.query);
    },
  );

  r.get(
    '/v1/memories/history',
    {
      schema: {
        summary: 'Events of one subject/predicate, oldest first',
        querystring: historyQuery,
        response: { 200: historyAnswer },
      },
    },
    async (req, reply) => {
      const bytes = await calls.historyText(req.auth, req.query);
      return bytes ? sendBytes(reply, bytes) : calls.history(req.auth, req.query);
    },
  );

  r.post(
    '/v1/memories/forget',
    {
      schema: { summary: 'Retract one value, or all', body: forgetBody, response: { 200: forgetAnswer } },
    },
    async (req) => calls.forget(req.auth, req.body),
  );
}
