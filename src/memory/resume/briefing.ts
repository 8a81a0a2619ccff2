/**
 * @module
 * The briefing: one text for a model, within a token budget. Always the header, the working state and
 * the pointers (cut to at most 60% of the budget if they are larger); the rest of the budget goes 60%
 * to recent turns (newest first), 25% to memories, 15% to output refs, each part's unused share
 * passing to the next (turns -> memories -> outputs). Tokens are estimated by `tokens.ts`. Pure.
 */
import type { OutputInfo, PointerRecord, TurnRecord, WorkingStateRecord } from '../../store/resume-types.ts';
import type { Belief } from '../fold.ts';
import { cutToTokens, estimateTokens } from './tokens.ts';

/** Share of the budget the fixed part (header, working state, pointers) may take at most. */
export const FIXED_SHARE = 0.6;
/** Shares of the rest: turns, memories, outputs. */
export const SHARES = Object.freeze({ turns: 0.6, memories: 0.25, outputs: 0.15 });
/** Most estimated tokens one turn may take in the briefing (its brief is used when it has one). */
export const TURN_LINE_TOKENS = 300;

/** What the briefing is made from; lists newest first. */
export interface BriefingInput {
  namespace: string;
  /** Epoch of the lease taken, or null when the resume deferred it. */
  epoch: number | null;
  state: WorkingStateRecord | null;
  pointers: PointerRecord[];
  /** Newest first. */
  turns: TurnRecord[];
  totalTurns: number;
  /** Best match first. */
  memories: Belief[];
  /** Newest first. */
  outputs: OutputInfo[];
  totalOutputs: number;
  budget: number;
}

/** The briefing and what went into it. */
export interface Briefing {
  text: string;
  tokens: number;
  /** Oldest first. */
  turns: TurnRecord[];
  memories: Belief[];
  outputs: OutputInfo[];
  omitted: { turns: number; memories: number; outputs: number };
}

/** Takes lines from `items` in order while they fit `budget`; returns the items taken and the tokens used. */
function fill<T>(
  items: readonly T[],
  line: (item: T) => string,
  budget: number,
): { taken: T[]; lines: string[]; used: number } {
  const taken: T[] = [];
  const lines: string[] = [];
  let used = 0;
  for (const item of items) {
    const text = line(item);
    const cost = estimateTokens(text) + 1; // + the newline
    if (used + cost > budget) break;
    taken.push(item);
    lines.push(text);
    used += cost;
  }
  return { taken, lines, used };
}

function fixedPart(input: BriefingInput): string {
  const s = input.state;
  const out = [
    `# Resume briefing for ${input.namespace}`,
    input.epoch === null
      ? 'Lease: not taken (read only; acquire the lease before writing).'
      : `Lease: held, epoch ${input.epoch}. Continue from the working state below; do not redo finished steps.`,
    '',
    '## Working state',
  ];
  if (!s) {
    out.push('(none yet: this agent starts fresh)');
  } else {
    out.push(`version ${s.version}, updated ${new Date(s.updatedAt).toISOString()}`);
    const field = (label: string, value: string | number | null) => {
      if (value !== null && value !== '') out.push(`${label}: ${value}`);
    };
    const list = (label: string, values: string[]) => {
      if (values.length > 0) out.push(`${label}:`, ...values.map((v, i) => `  ${i + 1}. ${v}`));
    };
    field('Goal', s.goal);
    list('Plan', s.plan);
    field('Step', s.step);
    field('Progress', s.progress);
    field('Focus', s.focus);
    field('Last milestone', s.lastMilestone);
    list('Decisions', s.decisions);
    list('Open questions', s.openQuestions);
    field('Notes', s.notes);
  }
  out.push('', '## Pointers');
  if (input.pointers.length === 0) out.push('(none)');
  for (const p of input.pointers) {
    const fields = Object.entries(p.fields)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    out.push(`- ${p.name} (${p.type}): ${fields}${p.note ? ` — ${p.note}` : ''}`);
  }
  return out.join('\n');
}

function turnLine(t: TurnRecord): string {
  const who = t.name ? `${t.role} ${t.name}` : t.role;
  const body = t.brief ?? t.content;
  return `[${t.seq}] ${who}: ${cutToTokens(body.replace(/\s+/g, ' '), TURN_LINE_TOKENS)}`;
}

function memoryLine(b: Belief): string {
  return `- ${b.event.subject} ${b.event.predicate}: ${cutToTokens(JSON.stringify(b.event.value), 100)}`;
}

function outputLine(o: OutputInfo): string {
  const what = [o.tool, `${o.bytes} bytes`].filter(Boolean).join(', ');
  return `- ${o.ref} (${what})${o.summary ? `: ${cutToTokens(o.summary, 60)}` : ''}`;
}

/** Renders the briefing of `input` within `input.budget` estimated tokens. */
export function renderBriefing(input: BriefingInput): Briefing {
  const fixed = cutToTokens(fixedPart(input), Math.floor(input.budget * FIXED_SHARE));
  let rest = input.budget - estimateTokens(fixed) - 1;
  const sections: string[] = [fixed];

  const heading = (title: string) => `\n## ${title}`;
  const turnsHead = heading('Recent turns (oldest first)');
  const turnBudget = Math.floor(rest * SHARES.turns) - estimateTokens(turnsHead) - 1;
  const turns = fill(input.turns, turnLine, Math.max(0, turnBudget));
  if (turns.taken.length > 0) {
    sections.push(turnsHead, ...turns.lines.reverse());
    rest -= turns.used + estimateTokens(turnsHead) + 1;
  }
  const memHead = heading('Memories');
  const memBudget =
    Math.floor((SHARES.memories / (SHARES.memories + SHARES.outputs)) * rest) - estimateTokens(memHead) - 1;
  const memories = fill(input.memories, memoryLine, Math.max(0, memBudget));
  if (memories.taken.length > 0) {
    sections.push(memHead, ...memories.lines);
    rest -= memories.used + estimateTokens(memHead) + 1;
  }
  const outHead = heading('Stored outputs (fetch by ref)');
  const outputs = fill(input.outputs, outputLine, Math.max(0, rest - estimateTokens(outHead) - 2));
  if (outputs.taken.length > 0) sections.push(outHead, ...outputs.lines);

  const text = sections.join('\n');
  return {
    text,
    tokens: estimateTokens(text),
    turns: turns.taken.reverse(),
    memories: memories.taken,
    outputs: outputs.taken,
    omitted: {
      turns: input.totalTurns - turns.taken.length,
      memories: input.memories.length - memories.taken.length,
      outputs: input.totalOutputs - outputs.taken.length,
    },
  };
}
