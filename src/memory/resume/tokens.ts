/**
 * @module
 * Token estimates for briefing budgets, without a tokenizer: one token per 4 bytes of UTF-8. For
 * English that is close to what model tokenizers count; for other scripts (2-4 bytes a character)
 * it over-estimates, so a briefing stays within its budget. Pure; used by `briefing.ts` and turns.
 */

/** Bytes of UTF-8 per estimated token. */
export const BYTES_PER_TOKEN = 4;

/** Estimated tokens of `text`: ceil(UTF-8 bytes / 4). */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN);
}

/**
 * `text` cut to at most `tokens` estimated tokens (an ellipsis marks a cut), on a character boundary.
 * @returns `text` itself when it fits
 */
export function cutToTokens(text: string, tokens: number): string {
  if (estimateTokens(text) <= tokens) return text;
  if (tokens <= 0) return '';
  const maxBytes = tokens * BYTES_PER_TOKEN - 3; // room for '…' (3 bytes)
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > maxBytes) break;
    bytes += n;
    end += ch.length;
  }
  return `${text.slice(0, end)}…`;
}
