/**
 * @module
 * Go/Knative duration syntax (`90s`, `30m`, `2h`, `1h30m`, `250ms`) to milliseconds and back, plus days and
 * weeks (`30d`, `2w`, `1w2d`: a day is 24 h; Go has neither, but a key's life is said in days).
 * Used by CLI flags, gateway annotations and config. Imports nothing.
 */

const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
});

const PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d|w)/y;

/**
 * Parses a Go duration string into milliseconds.
 * @param text e.g. `"1h30m"`; a bare `"0"` is zero.
 * @returns milliseconds (may be fractional for sub-ms units)
 * @throws {Error} "invalid duration '…': expected a number with a unit such as 90s, 30m, 2h, 30d" when malformed.
 * @example
 * ```ts
 * parseDuration('1h30m'); // 5_400_000
 * ```
 */
export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === '0') return 0;
  if (s.length === 0 || s.startsWith('-')) throw durationError(text);
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < s.length) {
    const at = PART.lastIndex;
    const m = PART.exec(s);
    if (!m || m.index !== at) throw durationError(text);
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  }
  return total;
}

function durationError(text: string): Error {
  return new Error(`invalid duration '${text}': expected a number with a unit such as 90s, 30m, 2h, 30d`);
}

/**
 * Formats milliseconds in Go style, largest units first (`5400000` -> `"1h30m"`).
 * @param ms non-negative milliseconds
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = Math.round(ms);
  let out = '';
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  if (rest > 0) out += `${rest}ms`;
  return out;
}
