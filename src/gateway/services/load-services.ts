/**
 * @module
 * Reads Knative Service manifests from a YAML file or a folder of them (`.yaml`/`.yml`, several
 * documents per file) and validates them into `ServiceConfig`s. Refuses two services of one name, in the
 * same namespace or not. Called by startGateway before anything is served, and on each reload.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { type ParseOptions, parseService } from './parse-service.ts';
import { ManifestError, type ServiceConfig } from './service-config.ts';

/**
 * Loads every service under `path`.
 * @param path a YAML file or a folder (not recursive)
 * @throws {ManifestError} on the first problem, naming file, document and field
 */
export async function loadServices(path: string, options: ParseOptions = {}): Promise<ServiceConfig[]> {
  const abs = resolve(path);
  let files: string[];
  try {
    const st = await stat(abs);
    files = st.isDirectory()
      ? (await readdir(abs))
          .filter((n) => n.endsWith('.yaml') || n.endsWith('.yml'))
          .sort()
          .map((n) => join(abs, n))
      : [abs];
  } catch (err) {
    throw new ManifestError(abs, 0, 'path', `cannot be read: ${(err as Error).message}`);
  }
  const services: ServiceConfig[] = [];
  for (const file of files) services.push(...parseManifestText(await readFile(file, 'utf8'), file, options));
  if (services.length === 0) throw new ManifestError(abs, 0, 'path', 'holds no Service manifest');
  checkUnique(services);
  return services;
}

/**
 * Parses the YAML text of one manifest file (several documents allowed; empty documents skipped).
 * @param text YAML text
 * @param file the file name used in messages and to resolve relative working directories
 * @throws {ManifestError}
 */
export function parseManifestText(text: string, file: string, options: ParseOptions = {}): ServiceConfig[] {
  const out: ServiceConfig[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    if ('errors' in doc && doc.errors.length > 0) {
      throw new ManifestError(file, i + 1, 'yaml', doc.errors[0]?.message ?? 'invalid YAML');
    }
    const data = doc.toJS();
    if (data === null || data === undefined) return;
    out.push(parseService(data, file, i + 1, options));
  });
  return out;
}

/** Two services of one name: the manifest set is refused as a whole, not one field of one document. */
export class DuplicateServiceError extends ManifestError {
  constructor(file: string, document: number, field: string, problem: string) {
    super(file, document, field, problem);
    this.name = 'DuplicateServiceError';
  }
}

/**
 * Throws when two services share a name, even in different namespaces: sessions, instances, metrics, the
 * admin API and reloads key services by name alone, so `agent` in team-a and in team-b would take each
 * other's sessions and instances.
 * @throws {DuplicateServiceError} naming both services and where each is defined
 */
export function checkUnique(services: readonly ServiceConfig[]): void {
  const seen = new Map<string, ServiceConfig>();
  for (const s of services) {
    const prev = seen.get(s.name);
    if (prev) {
      const where = `${prev.source.file} document ${prev.source.document}`;
      throw new DuplicateServiceError(
        s.source.file,
        s.source.document,
        'metadata.name',
        prev.namespace === s.namespace
          ? `service ${s.name}.${s.namespace} is already defined in ${where}`
          : `service ${s.name}.${s.namespace} has the name of service ${prev.name}.${prev.namespace} (${where}): ` +
              'service names must be unique across namespaces',
      );
    }
    seen.set(s.name, s);
  }
}
