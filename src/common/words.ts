/**
 * @module
 * Words of a text the way Tether indexes and searches them: Unicode letters and digits, case folded,
 * diacritics removed (`Café au lait` -> `cafe`, `au`, `lait`). One definition for the store's index,
 * the engine's match check and search terms. Imports nothing.
 */

/** Lower-cased words with diacritics removed. */
export function words(text: string): string[] {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}
