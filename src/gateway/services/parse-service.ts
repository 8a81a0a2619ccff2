/**
 * @module
 * Validates one parsed YAML document as a Knative `serving.knative.dev/v1` `Service` with the sandbox
 * annotations and returns a `ServiceConfig`. Every problem is a `ManifestError` naming file, document
 * and field. No file reading here (load-services.ts does that).
 */
import { resolve } from 'node:path';
import { parseDuration } from '../../common/durations.ts';
import { parseSandbox } from './parse-sandbox.ts';
import {
  ANNOTATIONS,
  type ContainerConfig,
  type IdlePolicy,
  ManifestError,
  SERVICE_DEFAULTS,
  type ServiceConfig,
} from './service-config.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const TEMPLATE_ANN = 'spec.template.metadata.annotations';

type Obj = Record<string, unknown>;

/** How strict `parseService` is about the container. */
export interface ParseOptions {
  /**
   * The local runtime runs `command` + `args`; on Kubernetes an image's own entrypoint may do, when `image` is set.
   * @default 'local'
   */
  runtime?: 'local' | 'kubernetes';
}

/**
 * Parses one document.
 * @param doc the YAML document as JS data
 * @param file the manifest path (for messages, and to resolve a relative `workingDir`)
 * @param document 1-based document number within the file
 * @throws {ManifestError} naming the field at fault
 */
export function parseService(doc: unknown, file: string, document: number, options: ParseOptions = {}): ServiceConfig {
  const fail = (field: string, problem: string): never => {
    throw new ManifestError(file, document, field, problem);
  };
  const root = asObject(doc, 'document', fail);
  if (root.apiVersion !== 'serving.knative.dev/v1')
    fail('apiVersion', `must be serving.knative.dev/v1, got ${show(root.apiVersion)}`);
  if (root.kind !== 'Service') fail('kind', `must be Service, got ${show(root.kind)}`);
  const meta = asObject(root.metadata, 'metadata', fail);
  const name = meta.name;
  if (typeof name !== 'string' || !DNS_LABEL.test(name))
    fail('metadata.name', `must be a DNS label, got ${show(name)}`);
  const namespace = meta.namespace ?? 'default';
  if (typeof namespace !== 'string' || !DNS_LABEL.test(namespace)) {
    fail('metadata.namespace', `must be a DNS label, got ${show(namespace)}`);
  }
  const spec = asObject(root.spec, 'spec', fail);
  const template = asObject(spec.template, 'spec.template', fail);
  const tmeta = template.metadata === undefined ? {} : asObject(template.metadata, 'spec.template.metadata', fail);
  const ann = readAnnotations(meta.annotations, tmeta.annotations, fail);
  const field = (k: keyof typeof ANNOTATIONS) => `${TEMPLATE_ANN}["${ANNOTATIONS[k]}"]`;

  const workload = ann[ANNOTATIONS.workloadType];
  if (workload !== undefined && workload !== 'sandbox')
    fail(field('workloadType'), `must be "sandbox", got ${show(workload)}`);
  const metric = ann[ANNOTATIONS.metric];
  if (metric !== undefined && metric !== 'session')
    fail(field('metric'), `only "session" is supported, got ${show(metric)}`);
  const affinityText = ann[ANNOTATIONS.affinity] ?? 'true';
  if (affinityText !== 'true' && affinityText !== 'false')
    fail(field('affinity'), `must be "true" or "false", got ${show(affinityText)}`);
  const cookieName = ann[ANNOTATIONS.cookie] ?? SERVICE_DEFAULTS.cookie;
  if (!COOKIE_NAME.test(cookieName)) fail(field('cookie'), `is not a valid cookie name: ${show(cookieName)}`);
  const signedText = ann[ANNOTATIONS.signedKeys];
  if (signedText !== undefined && signedText !== 'true' && signedText !== 'false')
    fail(field('signedKeys'), `must be "true" or "false", got ${show(signedText)}`);
  const addCookieText = ann[ANNOTATIONS.addSessionCookie] ?? 'false';
  if (addCookieText !== 'true' && addCookieText !== 'false')
    fail(field('addSessionCookie'), `must be "true" or "false", got ${show(addCookieText)}`);
  const policy = ann[ANNOTATIONS.idlePolicy] ?? SERVICE_DEFAULTS.idlePolicy;
  if (policy !== 'pause' && policy !== 'delete')
    fail(field('idlePolicy'), `must be "pause" or "delete", got ${show(policy)}`);

  const duration = (k: 'timeout' | 'expiry'): number | undefined => {
    const text = ann[ANNOTATIONS[k]];
    if (text === undefined) return undefined;
    try {
      return parseDuration(text);
    } catch (err) {
      return fail(field(k), (err as Error).message);
    }
  };
  const count = (k: 'warmPool' | 'target' | 'minScale' | 'maxScale', min: number, dflt: number): number => {
    const text = ann[ANNOTATIONS[k]];
    if (text === undefined) return dflt;
    const n = Number(text);
    if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < min) {
      fail(field(k), `must be an integer >= ${min}, got ${show(text)}`);
    }
    return n;
  };
  const target = count('target', 1, SERVICE_DEFAULTS.target);
  const warmPool = count('warmPool', 0, 0);
  const minScale = count('minScale', 0, 0);
  const maxScale = count('maxScale', 0, 0);
  if (maxScale > 0 && minScale > maxScale) fail(field('minScale'), `(${minScale}) is above max-scale (${maxScale})`);
  const expiry = duration('expiry');
  if (expiry === 0) fail(field('expiry'), 'must be above zero');

  const tspec = asObject(template.spec, 'spec.template.spec', fail);
  const templateName = tmeta.name;
  return {
    name: name as string,
    namespace: namespace as string,
    configuration: name as string,
    revision: typeof templateName === 'string' && templateName ? templateName : `${name}-00001`,
    source: { file, document },
    affinity: affinityText === 'true',
    cookieName,
    signedSessionKeys: signedText === undefined ? null : signedText === 'true',
    addSessionCookie: addCookieText === 'true',
    sessionTimeoutMs: duration('timeout') ?? SERVICE_DEFAULTS.sessionTimeoutMs,
    sessionExpiryMs: expiry ?? null,
    idlePolicy: policy as IdlePolicy,
    warmPool,
    target,
    minScale,
    maxScale,
    container: parseContainer(tspec.containers, file, fail, ann, options.runtime ?? 'local'),
  };
}

function parseContainer(
  value: unknown,
  file: string,
  fail: (f: string, p: string) => never,
  ann: Record<string, string>,
  runtime: 'local' | 'kubernetes',
): ContainerConfig {
  const base = 'spec.template.spec.containers';
  if (!Array.isArray(value) || value.length === 0) fail(base, 'must list at least one container');
  const c = asObject((value as unknown[])[0], `${base}[0]`, fail);
  const f = (k: string) => `${base}[0].${k}`;
  const strings = (k: string): string[] => {
    const v = c[k];
    if (v === undefined) return [];
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) fail(f(k), 'must be a list of strings');
    return v as string[];
  };
  const argv = [...strings('command'), ...strings('args')];
  if (c.image !== undefined && typeof c.image !== 'string') fail(f('image'), 'must be a string');
  if (runtime === 'kubernetes') {
    if (typeof c.image !== 'string' || c.image === '') fail(f('image'), 'is required by the Kubernetes runtime');
  } else if (argv.length === 0) {
    fail(f('command'), 'is required by the local runtime (an image is not run locally; give command and args)');
  }
  const env: Record<string, string> = {};
  if (c.env !== undefined) {
    if (!Array.isArray(c.env)) fail(f('env'), 'must be a list of {name, value}');
    (c.env as unknown[]).forEach((e, i) => {
      const item = asObject(e, f(`env[${i}]`), fail);
      if (typeof item.name !== 'string' || !ENV_NAME.test(item.name))
        fail(f(`env[${i}].name`), `is not a valid name: ${show(item.name)}`);
      if (item.valueFrom !== undefined) fail(f(`env[${i}].valueFrom`), 'is not supported (give a value)');
      const v = item.value ?? '';
      if (typeof v !== 'string') fail(f(`env[${i}].value`), 'must be a string (quote numbers in YAML)');
      env[item.name as string] = v as string;
    });
  }
  if (c.workingDir !== undefined && typeof c.workingDir !== 'string') fail(f('workingDir'), 'must be a string');
  let containerPort: number | undefined;
  if (c.ports !== undefined) {
    if (!Array.isArray(c.ports)) fail(f('ports'), 'must be a list');
    const p0 = (c.ports as unknown[])[0];
    if (p0 !== undefined) {
      const cp = asObject(p0, f('ports[0]'), fail).containerPort;
      if (cp !== undefined && (!Number.isInteger(cp) || (cp as number) < 1 || (cp as number) > 65535)) {
        fail(f('ports[0].containerPort'), `must be a port number, got ${show(cp)}`);
      }
      containerPort = cp as number | undefined;
    }
  }
  let readinessPath: string | undefined;
  if (c.readinessProbe !== undefined) {
    const probe = asObject(c.readinessProbe, f('readinessProbe'), fail);
    if (probe.httpGet !== undefined) {
      const path = asObject(probe.httpGet, f('readinessProbe.httpGet'), fail).path ?? '/';
      if (typeof path !== 'string' || !path.startsWith('/'))
        fail(f('readinessProbe.httpGet.path'), 'must start with /');
      readinessPath = path as string;
    }
  }
  const manifestDir = resolve(file, '..');
  return {
    image: c.image as string | undefined,
    argv,
    env,
    workingDir: resolve(manifestDir, (c.workingDir as string | undefined) ?? '.'),
    containerPort,
    readinessPath,
    sandbox: parseSandbox(c, ann, manifestDir, (k, problem) => fail(k.startsWith('resources') ? f(k) : k, problem)),
    raw: c,
  };
}

function readAnnotations(serviceLevel: unknown, templateLevel: unknown, fail: (f: string, p: string) => never) {
  const out: Record<string, string> = {};
  for (const [where, value] of [
    ['metadata.annotations', serviceLevel],
    [TEMPLATE_ANN, templateLevel],
  ] as const) {
    if (value === undefined || value === null) continue;
    const obj = asObject(value, where, fail);
    for (const [k, v] of Object.entries(obj)) {
      if (typeof v !== 'string') fail(`${where}["${k}"]`, `must be a string (quote it in YAML), got ${show(v)}`);
      out[k] = v as string;
    }
  }
  return out;
}

function asObject(value: unknown, field: string, fail: (f: string, p: string) => never): Obj {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(field, 'must be a mapping');
  return value as Obj;
}

function show(v: unknown): string {
  return v === undefined ? 'nothing' : JSON.stringify(v);
}
