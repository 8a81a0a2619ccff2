/**
 * @module
 * Makes a throw-away CA and a server certificate for 127.0.0.1/localhost with the `openssl` CLI,
 * in a temp dir, so the API-server double can speak HTTPS (client-node 1.x refuses plain http).
 * No network. Used by `test/kube/double.ts`.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** PEM texts of the CA and the server key pair. */
export interface DoubleCerts {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/**
 * Generate a CA and a server certificate signed by it (EC P-256, valid one day) in `dir`.
 * @throws Error when `openssl` is missing or fails
 */
export async function makeCerts(dir: string): Promise<DoubleCerts> {
  const p = (f: string) => join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-days',
    '1',
    '-subj',
    '/CN=tether-kube-double-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run('openssl', ['req', ...ec, '-keyout', p('server.key'), '-out', p('server.csr'), '-subj', '/CN=127.0.0.1']);
  await writeFile(
    p('server.ext'),
    [
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
    ].join('\n'),
  );
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    p('server.csr'),
    '-CA',
    p('ca.crt'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('server.crt'),
    '-days',
    '1',
    '-extfile',
    p('server.ext'),
  ]);
  const [caPem, certPem, keyPem] = await Promise.all([
    readFile(p('ca.crt'), 'utf8'),
    readFile(p('server.crt'), 'utf8'),
    readFile(p('server.key'), 'utf8'),
  ]);
  return { caPem, certPem, keyPem };
}
