/**
 * @module
 * The memory tools agents call over MCP: remember, recall, forget, memory_history, list_predicates.
 * Each has a Zod input schema derived from the HTTP route schemas and a handler that calls the same
 * engine as the HTTP routes and answers the same JSON shape. Knows nothing of MCP transport; used by
 * `mcp-route.ts`. Resume and lease tools are not here yet.
 */
import { z } from 'zod';
import type { AuthContext } from '../../auth/auth-context.ts';
import { resolveNamespace } from '../../auth/auth-context.ts';
import type { MemoryEngine } from '../../memory/engine.ts';
import { tenantOf } from '../../memory/namespace.ts';
import type { MemoryReader } from '../../memory/recall.ts';
import type { RegistryBook } from '../../memory/registry-book.ts';
import { instant } from '../schemas/common.ts';
import { forgetBody, historyQuery, recallQuery, rememberOneBody } from '../schemas/memories.ts';
import { getRegistryQuery } from '../schemas/registry.ts';
import { toRecallQuery, toStatement, writeContext } from '../statements.ts';
import { parseWith } from '../validate.ts';
import { beliefJson, eventJson, predicateJson, rememberJson } from '../wire.ts';

/** What the tools call: the same objects the HTTP routes use. */
export interface MemoryToolDeps {
  engine: MemoryEngine;
  reader: MemoryReader;
  registries: RegistryBook;
  /** Called with the number of events appended (metrics). */
  onAppend?: (n: number) => void;
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
  handler(auth: AuthContext, args: unknown): Promise<Record<string, unknown>>;
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

/** `memory_history`: as `GET /v1/memories/history`. */
export const historyArgs = historyQuery;

/** `list_predicates`: the namespace whose tenant's registry to list (default the key's own). */
export const listPredicatesArgs = getRegistryQuery.pick({ namespace: true });

function defineTool<S extends z.ZodObject>(
  name: string,
  description: string,
  schema: S,
  run: (auth: AuthContext, input: z.output<S>) => Promise<Record<string, unknown>>,
): MemoryTool {
  return {
    name,
    description,
    schema,
    handler: (auth, args) => run(auth, parseWith(schema, args ?? {}, 'arguments')),
  };
}

/**
 * Builds the five memory tools over `deps`.
 * @example
 * const tools = memoryTools({ engine, reader, registries });
 * await tools.find((t) => t.name === 'recall')!.handler(req.auth, { subject: 'alice' });
 */
export function memoryTools(deps: MemoryToolDeps): MemoryTool[] {
  const { engine, reader, registries } = deps;
  return [
    defineTool(
      'remember',
      'Remember one fact: subject, predicate (see list_predicates; use "note" when none fits) and value. ' +
        'Restating a held value writes nothing (already_known); a new value of a single-valued predicate ' +
        'reports what it superseded.',
      rememberArgs,
      async (auth, input) => {
        const ctx = writeContext(auth, resolveNamespace(auth, input.namespace));
        const [result] = await engine.remember(ctx, [toStatement(input)]);
        if (result?.stored) deps.onAppend?.(1);
        return rememberJson(result!);
      },
    ),
    defineTool(
      'recall',
      'Recall current beliefs: by subject and/or predicate, or a full-text search with q. ' +
        'as_of (ISO 8601 or epoch ms) answers as of that time; limit defaults to 50.',
      recallArgs,
      async (auth, input) => {
        const beliefs = await reader.recall(toRecallQuery(resolveNamespace(auth, input.namespace), input));
        return { beliefs: beliefs.map(beliefJson) };
      },
    ),
    defineTool(
      'forget',
      'Retract one value of a subject/predicate, or all of its values when value is omitted. ' +
        'History keeps the retraction; nothing is erased.',
      forgetArgs,
      async (auth, input) => {
        const ctx = writeContext(auth, resolveNamespace(auth, input.namespace));
        const r = await engine.forget(ctx, { subject: input.subject, predicate: input.predicate, value: input.value });
        if (r.event) deps.onAppend?.(1);
        return { withdrawn: r.withdrawn };
      },
    ),
    defineTool(
      'memory_history',
      'Every event (assertions and retractions) of one subject/predicate, oldest first, with who wrote it.',
      historyArgs,
      async (auth, input) => {
        const namespace = resolveNamespace(auth, input.namespace);
        const events = await reader.history(namespace, input.subject, input.predicate);
        return { events: events.map(eventJson) };
      },
    ),
    defineTool(
      'list_predicates',
      'The predicates in force for this namespace: cardinality (single or multi), value_type, allowed ' +
        'values of enums, aliases and a description.',
      listPredicatesArgs,
      async (auth, input) => {
        const tenant = tenantOf(resolveNamespace(auth, input.namespace));
        const registry = await registries.current(tenant);
        return { tenant, predicates: registry.predicates.map(predicateJson) };
      },
    ),
  ];
}

/** The JSON Schema advertised for a tool's arguments (input side: what a caller sends). */
export function toolInputJsonSchema(tool: MemoryTool): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.schema, { io: 'input', unrepresentable: 'any' });
  return { ...schema, type: 'object' };
}
