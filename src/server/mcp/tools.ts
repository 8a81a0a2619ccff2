/**
 * @module
 * The memory tools agents call over MCP: remember, recall, forget, memory_history, list_predicates. Each has a
 * Zod input schema derived from the HTTP route schemas (JSON types where a query string has text) and calls the
 * same memory call as its HTTP route (`calls/memory-calls.ts`), so both answer alike. Knows nothing of MCP
 * transport; used by `mcp-route.ts`.
 */
import { z } from 'zod';
import type { AuthContext } from '../../auth/auth-context.ts';
import type { MemoryCalls } from '../calls/memory-calls.ts';
import { instant } from '../schemas/common.ts';
import { forgetBody, historyQuery, recallQuery, rememberOneBody } from '../schemas/memories.ts';
import { getRegistryQuery } from '../schemas/registry.ts';
import { parseWith } from '../validate.ts';
import type { McpSessionContext } from './sessions.ts';

/** What the tools call: the memory calls the HTTP routes use. */
export interface MemoryToolDeps {
  calls: MemoryCalls;
}

/** One MCP tool: its name, description, Zod input schema and handler. */
export interface MemoryTool {
  name: string;
  description: string;
  /** The arguments object; also the source of the advertised JSON Schema. */
  schema: z.ZodObject;
  /**
   * Parses `args` with `schema` and runs the tool as `auth`.
   * @returns the JSON answer, the same shape as the matching HTTP route's
   * @throws {TetherError} `invalid_request` naming the field, `namespace_mismatch`, or an engine error
   */
  handler(auth: AuthContext, args: unknown, session?: McpSessionContext | null): Promise<Record<string, unknown>>;
}

/** `remember`: one statement, as `POST /v1/memories` takes it. */
export const rememberArgs = rememberOneBody;

/** `recall`: `GET /v1/memories` with JSON types (numbers, not query-string text). */
export const recallArgs = recallQuery.extend({
  as_of: instant.optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  min_confidence: z.number().min(0).max(1).optional(),
});

/** `forget`: as `POST /v1/memories/forget`. */
export const forgetArgs = forgetBody;

/** `memory_history`: as `GET /v1/memories/history`, `limit` a JSON number. */
export const historyArgs = historyQuery.extend({ limit: z.number().int().min(1).max(1000).optional() });

/** `list_predicates`: the namespace whose tenant's registry to list (default the key's own). */
export const listPredicatesArgs = getRegistryQuery.pick({ namespace: true });

/**
 * Defines a tool whose handler parses its arguments (400 `invalid_request` naming the field) and runs `run`.
 * Other tool modules (resume) define theirs with it too.
 */
export function defineTool<S extends z.ZodObject>(
  name: string,
  description: string,
  schema: S,
  run: (auth: AuthContext, input: z.output<S>, session: McpSessionContext | null) => Promise<object>,
): MemoryTool {
  return {
    name,
    description,
    schema,
    handler: async (auth, args, session) =>
      (await run(auth, parseWith(schema, args ?? {}, 'arguments'), session ?? null)) as Record<string, unknown>,
  };
}

/**
 * Builds the five memory tools over the memory calls.
 * @example
 * const tools = memoryTools({ calls: memoryCalls({ engine, reader, registries }) });
 * await tools.find((t) => t.name === 'recall')!.handler(req.auth, { subject: 'alice' });
 */
export function memoryTools(deps: MemoryToolDeps): MemoryTool[] {
  const { calls } = deps;
  return [
    defineTool(
      'remember',
      'Remember one fact: subject, predicate (see list_predicates; use "note" when none fits) and value. ' +
        'Restating a held value writes nothing (already_known); a new value of a single-valued predicate ' +
        'reports what it superseded.',
      rememberArgs,
      (auth, input) => calls.remember(auth, input),
    ),
    defineTool(
      'recall',
      'Recall current beliefs: by subject and/or predicate, or a full-text search with q. ' +
        'as_of (ISO 8601 or epoch ms) answers as of that time; limit defaults to 50.',
      recallArgs,
      (auth, input) => calls.recall(auth, input),
    ),
    defineTool(
      'forget',
      'Retract one value of a subject/predicate, or all of its values when value is omitted. ' +
        'History keeps the retraction; nothing is erased.',
      forgetArgs,
      (auth, input) => calls.forget(auth, input),
    ),
    defineTool(
      'memory_history',
      'The events (assertions and retractions) of one subject/predicate, oldest first, with who wrote it: ' +
        "at most limit (default 100, at most 1000) per call; pass the answer's next as cursor for the next page.",
      historyArgs,
      (auth, input) => calls.history(auth, input),
    ),
    defineTool(
      'list_predicates',
      'The predicates in force for this namespace: cardinality (single or multi), value_type, allowed ' +
        'values of enums, aliases and a description.',
      listPredicatesArgs,
      (auth, input) => calls.registry(auth, input),
    ),
  ];
}

/** The JSON Schema advertised for a tool's arguments (input side: what a caller sends). */
export function toolInputJsonSchema(tool: MemoryTool): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.schema, { io: 'input', unrepresentable: 'any' });
  return { ...schema, type: 'object' };
}
