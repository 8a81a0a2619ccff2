/**
 * @module
 * A renderer for the subset of Go templates (text/template + the Sprig functions Helm adds) that our Helm
 * chart uses, so a test can render the chart where `helm` is not installed: `{{ }}` with `-` trimming,
 * comments, fields (`.Values.a.b`, `$.Release.Name`, `.`), pipelines, `if`/`else if`/`else`, `range` over
 * lists and maps, `define` + `include`, and quote, default, required, toYaml, indent, nindent, eq, ne,
 * not, and, or, printf (%s %d), trunc, trimSuffix, b64enc, index, fail, sha256sum, randAlphaNum and lookup (answered
 * from the objects the caller says are in the cluster; none, as under `helm template`, answers an empty map).
 * Anything else is an error, never a silent guess.
 */
import { createHash, randomInt } from 'node:crypto';
import { stringify } from 'yaml';

type Value = unknown;
type Node =
  | { kind: 'text'; text: string }
  | { kind: 'out'; pipe: Expr[][] }
  | { kind: 'if'; branches: { cond: Expr[][] | null; body: Node[] }[] }
  | { kind: 'range'; pipe: Expr[][]; body: Node[]; elseBody: Node[] };
type Expr =
  | { t: 'str'; v: string }
  | { t: 'num'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'field'; root: 'dot' | 'root'; path: string[] }
  | { t: 'ident'; v: string }
  | { t: 'sub'; pipe: Expr[][] };

/** An object already in the cluster, as `lookup` finds it. */
export interface ClusterObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: unknown;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Templates by name (`define`d blocks and files). */
export class TemplateSet {
  readonly #defs = new Map<string, Node[]>();
  readonly #files = new Map<string, Node[]>();
  readonly #cluster: readonly ClusterObject[];

  /** @param cluster what `lookup` finds (an upgrade over an earlier release); none: a first install */
  constructor(cluster: readonly ClusterObject[] = []) {
    this.#cluster = cluster;
  }

  /** Adds a file: its `define` blocks become named templates; the rest is the file's body. */
  add(name: string, text: string): void {
    const tokens = tokenize(text, name);
    const { nodes } = parse(tokens, 0, name, this.#defs, []);
    this.#files.set(name, nodes);
  }

  /** Renders a file with `root` as `.` and `$`. */
  render(name: string, root: Value): string {
    const nodes = this.#files.get(name);
    if (!nodes) throw new Error(`no template file ${name}`);
    return this.#exec(nodes, root, root);
  }

  #exec(nodes: Node[], dot: Value, root: Value): string {
    let out = '';
    for (const n of nodes) {
      if (n.kind === 'text') out += n.text;
      else if (n.kind === 'out') out += print(this.#pipe(n.pipe, dot, root));
      else if (n.kind === 'if') {
        for (const b of n.branches) {
          if (b.cond === null || truthy(this.#pipe(b.cond, dot, root))) {
            out += this.#exec(b.body, dot, root);
            break;
          }
        }
      } else {
        const v = this.#pipe(n.pipe, dot, root);
        const items = Array.isArray(v)
          ? v
          : v && typeof v === 'object'
            ? Object.keys(v as object)
                .sort()
                .map((k) => (v as Record<string, unknown>)[k])
            : [];
        if (items.length === 0) out += this.#exec(n.elseBody, dot, root);
        for (const item of items) out += this.#exec(n.body, item, root);
      }
    }
    return out;
  }

  #pipe(pipe: Expr[][], dot: Value, root: Value): Value {
    let prev: Value;
    let first = true;
    for (const cmd of pipe) {
      const [head, ...rest] = cmd;
      if (!head) throw new Error('empty command');
      const args = rest.map((e) => this.#value(e, dot, root));
      if (!first) args.push(prev);
      if (head.t === 'ident') prev = this.#call(head.v, args, root);
      else {
        if (args.length > 0) throw new Error(`cannot give arguments to a value`);
        prev = this.#value(head, dot, root);
      }
      first = false;
    }
    return prev;
  }

  #value(e: Expr, dot: Value, root: Value): Value {
    switch (e.t) {
      case 'str':
      case 'num':
      case 'bool':
        return e.v;
      case 'field': {
        let v = e.root === 'dot' ? dot : root;
        for (const p of e.path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
        return v;
      }
      case 'sub':
        return this.#pipe(e.pipe, dot, root);
      case 'ident':
        return this.#call(e.v, [], root);
    }
  }

  #call(name: string, a: Value[], root: Value): Value {
    const str = (v: Value) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : print(v));
    const pad = (n: Value, s: Value) => str(s).replace(/^/gm, ' '.repeat(Number(n)));
    switch (name) {
      case 'quote':
        return a.map((v) => JSON.stringify(str(v))).join(' ');
      case 'default':
        return truthy(a[1]) ? a[1] : a[0];
      case 'required':
        if (a[1] === undefined || a[1] === null || a[1] === '') throw new Error(str(a[0]));
        return a[1];
      case 'toYaml':
        return a[0] === undefined || a[0] === null ? 'null' : stringify(a[0]).replace(/\n$/, '');
      case 'indent':
        return pad(a[0], a[1]);
      case 'nindent':
        return `\n${pad(a[0], a[1])}`;
      case 'eq':
        return a.slice(1).some((v) => v === a[0]);
      case 'ne':
        return a[0] !== a[1];
      case 'not':
        return !truthy(a[0]);
      case 'and':
        return a.find((v) => !truthy(v)) ?? a[a.length - 1];
      case 'or':
        return a.find((v) => truthy(v)) ?? a[a.length - 1];
      case 'printf': {
        let i = 1;
        return str(a[0]).replace(/%[sdv]/g, () => str(a[i++]));
      }
      case 'trunc':
        return str(a[1]).slice(0, Number(a[0]));
      case 'trimSuffix':
        return str(a[1]).endsWith(str(a[0])) ? str(a[1]).slice(0, -str(a[0]).length || undefined) : str(a[1]);
      case 'b64enc':
        return Buffer.from(str(a[0])).toString('base64');
      case 'index': {
        // As Go: a missing key gives nil, and indexing nil (a missing key's value, one level on) is an error.
        let v = a[0];
        for (const k of a.slice(1)) {
          if (v === undefined || v === null) throw new Error('index of untyped nil');
          v = typeof v === 'object' ? (v as Record<string, unknown>)[str(k)] : undefined;
        }
        return v;
      }
      case 'fail':
        throw new Error(str(a[0]));
      case 'sha256sum':
        return createHash('sha256').update(str(a[0])).digest('hex');
      case 'randAlphaNum':
        return Array.from({ length: Number(a[0]) }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('');
      case 'lookup': {
        // Helm: apiVersion, kind, namespace, name; an empty name lists (not used by the chart).
        const [apiVersion, kind, ns, name] = a.map(str);
        if (!name) throw new Error('lookup: the chart looks up one object by name');
        const hit = this.#cluster.find(
          (o) =>
            o.apiVersion === apiVersion &&
            o.kind === kind &&
            o.metadata.name === name &&
            (o.metadata.namespace ?? '') === ns,
        );
        return hit ?? {};
      }
      case 'include': {
        const body = this.#defs.get(str(a[0]));
        if (!body) throw new Error(`include: no template "${str(a[0])}"`);
        return this.#exec(body, a[1], root);
      }
      default:
        throw new Error(`function "${name}" not defined (the chart renderer knows a subset only)`);
    }
  }
}

/** Go's truth: false, 0, nil, empty string, list or map are false. */
function truthy(v: Value): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

function print(v: Value): string {
  if (v === undefined || v === null) return '<no value>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new Error(`cannot print a ${Array.isArray(v) ? 'list' : 'map'} (use toYaml)`);
}

type Token = { text: string } | { action: string; at: string };

function tokenize(src: string, file: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let trimNext = false;
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    let text = open < 0 ? src.slice(i) : src.slice(i, open);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (open < 0) {
      out.push({ text });
      break;
    }
    const close = src.indexOf('}}', open);
    if (close < 0) throw new Error(`${file}: unclosed action`);
    let inner = src.slice(open + 2, close);
    if (inner.startsWith('-')) {
      text = text.replace(/\s+$/, '');
      inner = inner.slice(1);
    }
    trimNext = inner.endsWith('-');
    if (trimNext) inner = inner.slice(0, -1);
    out.push({ text });
    inner = inner.trim();
    if (!(inner.startsWith('/*') && inner.endsWith('*/'))) {
      const line = src.slice(0, open).split('\n').length;
      out.push({ action: inner, at: `${file}:${line}` });
    }
    i = close + 2;
  }
  return out;
}

/** Parses until one of `stops` (an action keyword); returns the nodes and the stop action met. */
function parse(
  tokens: Token[],
  start: number,
  file: string,
  defs: Map<string, Node[]>,
  stops: string[],
): { nodes: Node[]; next: number; stop?: string } {
  const nodes: Node[] = [];
  let i = start;
  while (i < tokens.length) {
    const tok = tokens[i]!;
    i++;
    if ('text' in tok) {
      if (tok.text) nodes.push({ kind: 'text', text: tok.text });
      continue;
    }
    const a = tok.action;
    const word = a.split(/\s+/)[0]!;
    if (stops.includes(word)) return { nodes, next: i, stop: a };
    try {
      if (word === 'if') {
        const branches: { cond: Expr[][] | null; body: Node[] }[] = [];
        let cond: Expr[][] | null = parsePipe(a.slice(2));
        for (;;) {
          const r = parse(tokens, i, file, defs, ['else', 'end']);
          branches.push({ cond, body: r.nodes });
          i = r.next;
          if (!r.stop) throw new Error('if without end');
          if (r.stop === 'end') break;
          const rest = r.stop.slice(4).trim();
          cond = rest.startsWith('if ') ? parsePipe(rest.slice(3)) : null;
        }
        nodes.push({ kind: 'if', branches });
      } else if (word === 'range') {
        const pipe = parsePipe(a.slice(5));
        const r = parse(tokens, i, file, defs, ['else', 'end']);
        let elseBody: Node[] = [];
        i = r.next;
        if (r.stop === 'else') {
          const e = parse(tokens, i, file, defs, ['end']);
          elseBody = e.nodes;
          i = e.next;
        } else if (!r.stop) throw new Error('range without end');
        nodes.push({ kind: 'range', pipe, body: r.nodes, elseBody });
      } else if (word === 'define') {
        const name = /^define\s+"([^"]+)"$/.exec(a)?.[1];
        if (!name) throw new Error('define needs a quoted name');
        const r = parse(tokens, i, file, defs, ['end']);
        if (!r.stop) throw new Error('define without end');
        defs.set(name, r.nodes);
        i = r.next;
      } else if (['end', 'else', 'with', 'template', 'block'].includes(word)) {
        throw new Error(`unexpected or unsupported {{ ${word} }}`);
      } else nodes.push({ kind: 'out', pipe: parsePipe(a) });
    } catch (err) {
      throw new Error(`${tok.at}: ${(err as Error).message}`);
    }
  }
  if (stops.length > 0) return { nodes, next: i };
  return { nodes, next: i };
}

function parsePipe(src: string): Expr[][] {
  const words = lex(src.trim());
  let pos = 0;
  const pipeUntil = (close: boolean): Expr[][] => {
    const cmds: Expr[][] = [[]];
    while (pos < words.length) {
      const w = words[pos++]!;
      if (w === ')') {
        if (!close) throw new Error('unbalanced )');
        return cmds;
      }
      if (w === '|') cmds.push([]);
      else if (w === '(') cmds[cmds.length - 1]!.push({ t: 'sub', pipe: pipeUntil(true) });
      else cmds[cmds.length - 1]!.push(expr(w));
    }
    if (close) throw new Error('unbalanced (');
    return cmds;
  };
  const pipe = pipeUntil(false);
  if (pipe.some((c) => c.length === 0)) throw new Error(`empty command in "${src}"`);
  return pipe;
}

function lex(src: string): string[] {
  const out: string[] = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|\(|\)|\||[^\s()|]+)/gy;
  for (let m = re.exec(src); m !== null; m = re.exec(src)) out.push(m[1]!);
  return out;
}

function expr(w: string): Expr {
  if (w.startsWith('"')) return { t: 'str', v: JSON.parse(w) };
  if (/^-?\d+$/.test(w)) return { t: 'num', v: Number(w) };
  if (w === 'true' || w === 'false') return { t: 'bool', v: w === 'true' };
  if (w === '.') return { t: 'field', root: 'dot', path: [] };
  if (w === '$') return { t: 'field', root: 'root', path: [] };
  if (w.startsWith('$.')) return { t: 'field', root: 'root', path: w.slice(2).split('.') };
  if (w.startsWith('.')) return { t: 'field', root: 'dot', path: w.slice(1).split('.') };
  if (/^[A-Za-z][A-Za-z0-9]*$/.test(w)) return { t: 'ident', v: w };
  throw new Error(`cannot read "${w}"`);
}
