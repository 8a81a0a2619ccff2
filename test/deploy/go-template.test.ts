/**
 * The chart renderer follows Go's text/template where the chart relies on it: `-` trims whitespace, `if`
 * uses Go's truth, `range` walks lists and maps (sorted keys), `include` + `nindent`, pipelines pass the
 * value last, and an unknown function or a bad action is an error rather than a guess.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TemplateSet } from './go-template.ts';

function render(text: string, root: unknown, helpers = ''): string {
  const set = new TemplateSet();
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
});
