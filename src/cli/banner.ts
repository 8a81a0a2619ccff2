/**
 * @module
 * What `tether up`, `tether memory` and `tether gateway` print once they are serving: the URLs, where the
 * admin key and token are, the console URL, and curl lines for what is actually loaded. Written to
 * stdout in one piece after start-up, apart from the log lines. Pure text builders; the commands print.
 */

/** A loaded service, as the banner shows it. */
export interface BannerService {
  name: string;
  namespace: string;
  cookieName: string;
}

/** What the banners show. */
export interface BannerInput {
  memoryUrl?: string;
  /** The shared store, when not the embedded one, e.g. `PostgreSQL postgres://tether:***@db/tether`. */
  store?: string;
  /** The admin key file, or null when the key came from TETHER_ADMIN_KEY. */
  adminKeyFile?: string | null;
  gatewayUrl?: string;
  adminUrl?: string;
  /** The gateway admin token file, if the gateway has one there. */
  adminTokenFile?: string;
  /** True when the gateway admin token was given some other way (flag or env). */
  adminTokenGiven?: boolean;
  /** True when the admin API needs no token (`--insecure-open-admin`). */
  adminOpen?: boolean;
  consoleUrl: string;
  services?: readonly BannerService[];
  domain?: string;
  /** The isolation of local instances in force (`namespaces` or `none`). */
  isolation?: string;
}

function shellQuote(text: string): string {
  return /^[\w./:@-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** The banner text (ends with a newline). */
export function banner(title: string, b: BannerInput): string {
  const lines = ['', title, ''];
  if (b.memoryUrl) {
    const key = b.adminKeyFile ? `admin key: ${b.adminKeyFile}` : 'admin key: from TETHER_ADMIN_KEY';
    lines.push(`  memory server   ${b.memoryUrl}   (${key})`);
    if (b.store) lines.push(`  Store: ${b.store}`);
  }
  if (b.gatewayUrl && b.adminUrl) {
    const token = b.adminTokenFile
      ? `   (admin token: ${b.adminTokenFile})`
      : b.adminTokenGiven
        ? '   (admin token required)'
        : b.adminOpen
          ? '   (admin API open to every local process: --insecure-open-admin)'
          : '';
    lines.push(`  session gateway ${b.gatewayUrl}   admin ${b.adminUrl}/_tether/sessions${token}`);
  }
  if (b.isolation) {
    const plain = b.isolation === 'none' ? '   (instances are plain processes of this user: docs/security.md)' : '';
    lines.push(`  isolation       ${b.isolation}${plain}`);
  }
  lines.push(`  web console     ${b.consoleUrl}`, '', 'Try:');
  if (b.memoryUrl) {
    const bearer = b.adminKeyFile ? `$(cat ${shellQuote(b.adminKeyFile)})` : '$TETHER_ADMIN_KEY';
    lines.push(`  curl -s -H "Authorization: Bearer ${bearer}" ${b.memoryUrl}/v1/whoami`);
  }
  if (b.gatewayUrl && b.adminUrl) {
    for (const s of b.services ?? []) {
      const host = `${s.name}.${s.namespace}.${b.domain ?? 'example.com'}`;
      lines.push(`  curl -s -H 'Host: ${host}' -H 'Cookie: ${s.cookieName}=alice' ${b.gatewayUrl}/`);
    }
    const auth = b.adminTokenFile
      ? `-H "Authorization: Bearer $(cat ${shellQuote(b.adminTokenFile)})" `
      : b.adminTokenGiven
        ? '-H "Authorization: Bearer $TETHER_GATEWAY_ADMIN_TOKEN" '
        : '';
    lines.push(`  curl -s ${auth}${b.adminUrl}/_tether/sessions`);
  }
  lines.push('');
  return `${lines.join('\n')}\n`;
}

/** Writes `text` to stdout once every log line written so far is out (pino writes asynchronously). */
export async function printBanner(log: { flush(cb?: (err?: Error) => void): void }, text: string): Promise<void> {
  await new Promise<void>((resolve) => log.flush(() => resolve()));
  process.stdout.write(text);
}
