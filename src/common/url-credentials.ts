/**
 * @module
 * Where the credentials of a URL end, for printing URLs with the password masked and naming the host
 * of one that cannot be used. A password written with a raw '/', '?', '#' or '@' makes `new URL()`
 * read part of it as host, port or path (or fail), so the parser alone cannot be trusted with it; an
 * '@' later in the URL (in a query option, say) must not be taken for the end of the credentials
 * either. Imports nothing.
 */

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * The index of the '@' that ends the credentials of `url`, or -1 when it has none: the first '@' when
 * `new URL()` reads the host right after it (the URL means what it says), else the last '@'.
 */
export function credentialsEnd(url: string): number {
  const scheme = SCHEME.exec(url)?.[0].length ?? 0;
  const first = url.indexOf('@', scheme);
  if (scheme === 0 || first < 0) return -1;
  try {
    const host = new URL(url).host.toLowerCase();
    if (host !== '' && url.slice(first + 1, first + 1 + host.length).toLowerCase() === host) return first;
  } catch {
    // not parsable as written: a raw character in the password
  }
  return url.lastIndexOf('@');
}

/** True when the credentials of `url` hold a raw '/', '?', '#' or '@' (they must be percent-encoded). */
export function rawCredentials(url: string): boolean {
  const at = credentialsEnd(url);
  const scheme = SCHEME.exec(url)?.[0].length ?? 0;
  return at > scheme && /[/?#@]/.test(url.slice(scheme, at));
}
