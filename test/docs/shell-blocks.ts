/**
 * @module
 * Finds the shell blocks of a Markdown page and how each is marked, for test/docs/shell-examples.test.ts.
 * A shell block is a fence whose info string starts with sh, bash, shell or console. It is not run when its
 * info string also says `cluster` (```sh cluster: needs a Kubernetes cluster), or when the last non-blank line
 * before it is `<!-- needs: cluster -->` or `<!-- not run: REASON -->` (a reason is required).
 */

const SHELL = new Set(['sh', 'bash', 'shell', 'console']);

/** Why a block is not run; null when it runs. */
export interface NotRun {
  kind: 'cluster' | 'not run';
  reason: string;
}

/** One shell block of a page. */
export interface ShellBlock {
  /** The page, as given. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's info string (`sh`, `sh cluster`). */
  info: string;
  /** The block's text, without the fences. */
  code: string;
  notRun: NotRun | null;
}

/** The shell blocks of `text` (the Markdown of `file`), in page order. */
export function shellBlocks(file: string, text: string): ShellBlock[] {
  const lines = text.split('\n');
  const blocks: ShellBlock[] = [];
  let lastText = '';
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i] as string);
    if (!open) {
      if ((lines[i] as string).trim() !== '') lastText = (lines[i] as string).trim();
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] as string).startsWith('```'); i++) body.push(lines[i] as string);
    const lang = open[1] ?? '';
    const words = (open[2] ?? '').trim().split(/\s+/).filter(Boolean);
    if (SHELL.has(lang)) {
      blocks.push({
        file,
        line: start + 1,
        info: [lang, ...words].join(' '),
        code: `${body.join('\n')}\n`,
        notRun: markOf(words, lastText),
      });
    }
    lastText = '';
  }
  return blocks;
}

function markOf(words: string[], before: string): NotRun | null {
  if (words.includes('cluster') || before === '<!-- needs: cluster -->') {
    return { kind: 'cluster', reason: 'needs a Kubernetes cluster' };
  }
  const notRun = /^<!-- not run: (.*\S.*) -->$/.exec(before);
  return notRun ? { kind: 'not run', reason: (notRun[1] as string).trim() } : null;
}
