/**
 * The chart renderer follows Go's text/template where the chart relies on it: `-` trims whitespace, `if`
 * uses Go's truth, `range` walks lists and maps (sorted keys), `include` + `nindent`, pipelines pass the
 * value last, and an unknown function or a bad action is an error rather than a guess.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ClusterObject, TemplateSet } from './go-template.ts';

function render(text: string, root: unknown, helpers = '', cluster: ClusterObject[] = []): string {
  const set = new TemplateSet(cluster);
  set.add('_helpers.tpl', helpers);
  set.add('t.yaml', text);
  return set.render('t.yaml', root);
}

describe('TemplateSet', () => {
  it('trims whitespace on the dashed side only', () => {
    assert.equal(render('a  {{- "b" }}  c', {}), 'ab  c');
    assert.equal(render('a  {{ "b" -}}  \n c', {}), 'a  bc');
    assert.equal(render('x\n{{- /* gone */ -}}\ny', {}), 'xy');
  });

  it('uses Go truth in if / else if / else (empty list, empty map, 0 and "" are false)', () => {
    const t = '{{ if .a }}A{{ else if .b }}B{{ else }}C{{ end }}';
    assert.equal(render(t, { a: [1] }), 'A');
    assert.equal(render(t, { a: [], b: { k: 1 } }), 'B');
    assert.equal(render(t, { a: {}, b: 0 }), 'C');
    assert.equal(render('{{ if not .x }}none{{ end }}', { x: '' }), 'none');
  });

  it('ranges over a list and a map (sorted keys) with $ reaching the root, and runs else when empty', () => {
    assert.equal(render('{{ range .l }}[{{ . }}-{{ $.n }}]{{ end }}', { l: ['a', 'b'], n: 1 }), '[a-1][b-1]');
    assert.equal(render('{{ range .m }}{{ . }}{{ end }}', { m: { z: 2, a: 1 } }), '12');
    assert.equal(render('{{ range .l }}x{{ else }}empty{{ end }}', { l: [] }), 'empty');
  });

  it('pipes the value as the last argument: default, quote, printf, toYaml | nindent, include', () => {
    assert.equal(render('{{ .v | default "d" | quote }}', {}), '"d"');
    assert.equal(render('{{ .v | default "d" }}', { v: 'x' }), 'x');
    assert.equal(render('{{ printf "%s-%v" .a .b }}', { a: 'n', b: 3 }), 'n-3');
    assert.equal(render('k:{{ toYaml .m | nindent 2 }}', { m: { a: 1, b: [2] } }), 'k:\n  a: 1\n  b:\n    - 2');
    const helpers = '{{- define "h" -}}\nname: {{ .n }}\n{{- end }}';
    assert.equal(render('m:{{- include "h" . | nindent 2 }}', { n: 'x' }, helpers), 'm:\n  name: x');
  });

  it('refuses what it does not know', () => {
    assert.throws(() => render('{{ tpl "x" . }}', {}), /function "tpl" not defined/);
    assert.throws(() => render('{{ with .a }}x{{ end }}', {}), /unsupported \{\{ with \}\}/);
    assert.throws(() => render('{{ .l }}', { l: [1] }), /cannot print a list/);
    assert.throws(() => render('{{ required "need x" .x }}', {}), /need x/);
  });

  it('looks up what the cluster holds (an empty map when absent, as helm template), and index fails on nil as Go does', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'n' }, data: { k: 'djE=' } };
    const t =
      '{{ if lookup "v1" "Secret" "n" "s" }}{{ index (lookup "v1" "Secret" "n" "s") "data" "k" }}{{ else }}none{{ end }}';
    assert.equal(render(t, {}, '', [secret]), 'djE=');
    assert.equal(render(t, {}), 'none');
    assert.equal(render(t, {}, '', [{ ...secret, metadata: { name: 's', namespace: 'other' } }]), 'none');
    assert.throws(() => render('{{ index (lookup "v1" "Secret" "n" "s") "data" "k" }}', {}), /index of untyped nil/);
    assert.equal(render('{{ index .m "a" | default "missing" }}', { m: {} }), 'missing');
  });

  it('has sha256sum, randAlphaNum and fail', () => {
    assert.equal(
      render('{{ "abc" | sha256sum }}', {}),
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    const r = render('{{ randAlphaNum 40 }}', {});
    assert.match(r, /^[A-Za-z0-9]{40}$/);
    assert.notEqual(render('{{ randAlphaNum 40 }}', {}), r);
    assert.throws(() => render('{{ if .x }}{{ fail "x is set" }}{{ end }}', { x: 1 }), /x is set/);
    assert.equal(render('{{ if .x }}{{ fail "x is set" }}{{ end }}ok', {}), 'ok');
  });
});
