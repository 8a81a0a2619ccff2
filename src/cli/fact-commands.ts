/**
 * @module
 * `tether recall|search|history|remember|forget`: the memory API's fact calls from the command line.
 * A value given as text is sent with the type its predicate has in the tenant's registry (number,
 * boolean or text), so `tether remember repo open_issues 12` (coding registry) sends a number, as the API expects.
 */
import type { Command } from 'commander';
import { apiRequest, type MemoryClientFlags, memoryKeyOf } from './api-client.ts';
import { memoryClientOptions } from './client-options.ts';
import { type Column, print, printRecord } from './output.ts';

/** Events asked for per history page (the most the server gives). */
const HISTORY_PAGE = 1000;

interface FactFlags extends MemoryClientFlags {
  namespace?: string;
}

interface BeliefRow {
  subject: string;
  predicate: string;
  value: unknown;
  confidence: number;
  observed_at: string;
  replaced: { value: unknown }[];
}

interface EventRow {
  id: string;
  value: unknown;
  retraction: boolean;
  observed_at: string;
  recorded_at: string;
  evidence: string | null;
  actor: { tenant: string; agent: string | null; session: string | null; key_id: string };
}

const BELIEF_COLUMNS: Column<BeliefRow>[] = [
  { header: 'subject', cell: (b) => b.subject },
  { header: 'predicate', cell: (b) => b.predicate },
  { header: 'value', cell: (b) => b.value },
  { header: 'observed', cell: (b) => b.observed_at },
  { header: 'replaced', cell: (b) => b.replaced.map((r) => r.value) },
];

const EVENT_COLUMNS: Column<EventRow>[] = [
  { header: 'observed', cell: (e) => e.observed_at },
  { header: 'event', cell: (e) => (e.retraction ? 'retracted' : 'asserted') },
  { header: 'value', cell: (e) => (e.retraction && e.value === null ? '(all)' : e.value) },
  { header: 'actor', cell: (e) => [e.actor.agent ?? e.actor.tenant, e.actor.session].filter(Boolean).join(' @ ') },
  { header: 'key', cell: (e) => e.actor.key_id },
  { header: 'evidence', cell: (e) => e.evidence },
];

/** The text of a value as the type the predicate holds. */
export function typedValue(text: string, valueType: string | undefined): string | number | boolean {
  if (valueType === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  if (valueType === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/** The value type of `predicate` (or of a predicate it is an alias of) in the namespace's registry. */
async function valueTypeOf(flags: FactFlags, bearer: string, predicate: string): Promise<string | undefined> {
  const registry = (await apiRequest(flags.url, '/v1/registry', {
    bearer,
    query: { namespace: flags.namespace },
  })) as { predicates: { name: string; value_type: string; aliases: string[] }[] };
  const p = registry.predicates.find((d) => d.name === predicate || d.aliases.includes(predicate));
  return p?.value_type;
}

function withNamespace(command: Command): Command {
  return memoryClientOptions(command).option('--namespace <ns>', "tenant:agent (default: the key's own)");
}

async function recall(flags: FactFlags & { asOf?: string; limit?: string }, query: Record<string, string | undefined>) {
  const answer = (await apiRequest(flags.url, '/v1/memories', {
    bearer: memoryKeyOf(flags),
    query: { namespace: flags.namespace, as_of: flags.asOf, limit: flags.limit, ...query },
  })) as { beliefs: BeliefRow[] };
  print(flags, answer, answer.beliefs, BELIEF_COLUMNS, '(no beliefs)');
}

/** Registers the fact commands. */
export function registerFactCommands(program: Command): void {
  withNamespace(program.command('recall').description('current beliefs (or as of a time)'))
    .argument('[subject]', 'one subject')
    .argument('[predicate]', 'one predicate of that subject')
    .option('--as-of <time>', 'read as of this time (ISO 8601 or epoch ms)')
    .option('--limit <n>', 'most beliefs')
    .action(async (subject: string | undefined, predicate: string | undefined, flags) =>
      recall(flags, { subject, predicate }),
    );

  withNamespace(program.command('search').description('text search over current beliefs'))
    .argument('<text...>', 'words to search for')
    .option('--as-of <time>', 'read as of this time (ISO 8601 or epoch ms)')
    .option('--limit <n>', 'most beliefs')
    .action(async (words: string[], flags) => recall(flags, { q: words.join(' ') }));

  withNamespace(program.command('history').description("a fact's events, oldest first, with their actors"))
    .argument('<subject>')
    .argument('<predicate>')
    .action(async (subject: string, predicate: string, flags: FactFlags) => {
      // The server answers a page at a time; follow `next` to the last page.
      const events: EventRow[] = [];
      let cursor: string | undefined;
      do {
        const page = (await apiRequest(flags.url, '/v1/memories/history', {
          bearer: memoryKeyOf(flags),
          query: { namespace: flags.namespace, subject, predicate, limit: String(HISTORY_PAGE), cursor },
        })) as { events: EventRow[]; next: string | null };
        events.push(...page.events);
        cursor = page.next ?? undefined;
      } while (cursor !== undefined);
      print(flags, { events, next: null }, events, EVENT_COLUMNS, '(no events)');
    });

  withNamespace(program.command('remember').description('remember one fact'))
    .argument('<subject>')
    .argument('<predicate>')
    .argument('<value>', "the value (sent as a number or boolean when the predicate's type says so)")
    .option('--evidence <text>', 'why this is known')
    .option('--observed-at <time>', 'when it was observed (ISO 8601 or epoch ms; default now)')
    .option('--source <text>', 'where it came from')
    .action(
      async (
        subject: string,
        predicate: string,
        value: string,
        flags: FactFlags & { evidence?: string; observedAt?: string; source?: string },
      ) => {
        const bearer = memoryKeyOf(flags);
        const answer = (await apiRequest(flags.url, '/v1/memories', {
          method: 'POST',
          bearer,
          body: {
            namespace: flags.namespace,
            subject,
            predicate,
            value: typedValue(value, await valueTypeOf(flags, bearer, predicate)),
            evidence: flags.evidence,
            source: flags.source,
            observed_at:
              flags.observedAt && /^\d+$/.test(flags.observedAt) ? Number(flags.observedAt) : flags.observedAt,
          },
        })) as { stored: boolean; already_known: boolean; superseded: unknown; event: { id: string } | null };
        if (flags.json) return printRecord(flags, answer);
        printRecord(flags, {
          stored: answer.stored,
          already_known: answer.already_known,
          superseded: answer.superseded,
          event: answer.event?.id ?? null,
        });
      },
    );

  withNamespace(program.command('forget').description('retract one value, or all values of a fact'))
    .argument('<subject>')
    .argument('<predicate>')
    .argument('[value]', 'the value to retract (default: all)')
    .action(async (subject: string, predicate: string, value: string | undefined, flags: FactFlags) => {
      const bearer = memoryKeyOf(flags);
      const typed = value === undefined ? undefined : typedValue(value, await valueTypeOf(flags, bearer, predicate));
      const answer = (await apiRequest(flags.url, '/v1/memories/forget', {
        method: 'POST',
        bearer,
        body: { namespace: flags.namespace, subject, predicate, value: typed },
      })) as Record<string, unknown>;
      printRecord(flags, answer);
    });
}
