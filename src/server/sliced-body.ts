/**
 * @module
 * A body holding a long array (a remember of up to 1,000 statements) is checked in time slices: the
 * rest of the body first, then the array's items one by one (well-formed text, then the item's schema),
 * the event loop turning every `SLICE_MS` (light requests first). Checked whole in one go, as the
 * route's validator and the well-formed hook otherwise do, a batch of 500 held the loop 10-50 ms
 * (bench:fairness). The errors are those of the whole-body check: 400 naming the first bad field
 * (`statements[150].value`), nothing stored. A route opts in with `config.slicedBody` and the hook of
 * `slicedBodyHook`, which then checks all of its body's text; the body it leaves is final, and the
 * validator passes it through (`isCheckedBody`).
 */
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Ticket } from '../common/light-first.ts';
import { SLICE_MS, TimeSlice } from '../common/time-slice.ts';
import { parseWith } from './validate.ts';
import { requireWellFormed } from './well-formed.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's body may hold a long array, checked in slices (`sliced-body.ts`). */
    slicedBody?: SlicedBody;
  }
}

/** Which array of a body is checked item by item, and how. */
export interface SlicedBody {
  /** The array's field (`statements`). */
  key: string;
  /** One item's schema. */
  item: z.ZodType;
  /** The whole body's schema with the array's items left unchecked (`z.array(z.unknown())` and its bounds). */
  envelope: z.ZodType;
}

/** Arrays of fewer items are checked whole, with the rest of the body (it takes well under a slice). */
export const SLICED_FROM_ITEMS = 64;

const checked = new WeakSet<object>();

/** The body's array named by `spec` when it is long enough to be checked in slices; else null. */
export function longArray(body: unknown, spec: SlicedBody): unknown[] | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const items = (body as Record<string, unknown>)[spec.key];
  return Array.isArray(items) && items.length >= SLICED_FROM_ITEMS ? items : null;
}

/** Whether `body` was checked in slices already (the route's validator passes it as it is). */
export function isCheckedBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && checked.has(body);
}

/**
 * Checks and parses `body` (whose `spec.key` holds a long array) in slices of `sliceMs` (ms).
 * @throws {TetherError} 400 `invalid_request` naming the first bad field
 */
export async function parseBodyInSlices(
  body: Record<string, unknown>,
  spec: SlicedBody,
  sliceMs = SLICE_MS,
  lane: Ticket | null = null,
): Promise<object> {
  const items = body[spec.key] as unknown[];
  const rest = Object.fromEntries(Object.entries(body).filter(([k]) => k !== spec.key));
  requireWellFormed(rest, 'body');
  const envelope = parseWith(spec.envelope, body) as Record<string, unknown>;
  const slice = new TimeSlice(lane, sliceMs);
  const parsed: unknown[] = [];
  for (const [i, item] of items.entries()) {
    const field = `${spec.key}[${i}]`;
    requireWellFormed(item, field, `${field}.`);
    parsed.push(parseWith(spec.item, item, field, `${field}.`));
    if (slice.due()) await slice.yield();
  }
  const out = { ...envelope, [spec.key]: parsed };
  checked.add(out);
  return out;
}

/**
 * The `preValidation` hook of a route with `config.slicedBody`, which owns its body's text check (the
 * well-formed hook leaves it): a long array's body is checked and parsed here, in slices; any other is
 * checked for well-formed text whole and left to the route's validator.
 */
export async function slicedBodyHook(req: FastifyRequest): Promise<void> {
  const spec = req.routeOptions.config.slicedBody;
  if (spec && longArray(req.body, spec) !== null) {
    req.body = await parseBodyInSlices(req.body as Record<string, unknown>, spec, SLICE_MS, req.lane);
  } else if (typeof req.body !== 'string') requireWellFormed(req.body, 'body');
}
