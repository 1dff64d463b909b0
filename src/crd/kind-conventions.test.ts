/**
 * The custom-kind conventions on small kinds, one check at a time: each breaks exactly its check,
 * at the schema path it names; the corrected kind breaks none; an allowance drops only what it names.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TSchema } from 'typebox';
import { defineCustomKind } from './custom-kind.js';
import { k8s } from './k8s.js';
import { kindConventionFindings, type KindConventionFinding } from './kind-conventions.js';
import { Type } from './typebox.js';

function kindOf(schema: Record<string, TSchema>, subresources?: { status?: Record<string, never> }) {
  return defineCustomKind({
    group: 'example.com',
    names: { kind: 'Gadget', plural: 'gadgets' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema, ...(subresources ? { subresources } : {}) }],
  });
}

const STATUS = { status: {} } as const;
const spec = Type.Object({ size: Type.Integer() });
const brief = (fs: KindConventionFinding[]) => fs.map((f) => `${f.check} ${f.path}`);

test('a kind written the right way has no finding', () => {
  const kind = kindOf(
    {
      spec: Type.Object({
        name: Type.String({ maxLength: 63 }),
        mode: Type.Union([Type.Literal('Always'), Type.Literal('IfNotPresent')]),
        startTime: Type.Optional(k8s.dateTime()),
        ports: Type.Array(Type.Object({ name: Type.String({ maxLength: 15 }), port: Type.Integer() }), {
          ...k8s.listMap(['name']),
          maxItems: 8,
        }),
        selector: Type.Optional(k8s.builtin('io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector')),
        target: Type.Optional(k8s.intOrString()),
      }),
      status: Type.Object({
        observedGeneration: Type.Optional(Type.Integer()),
        conditions: Type.Optional(k8s.conditions({ maxItems: 16 })),
      }),
    },
    STATUS,
  );
  assert.deepEqual(kindConventionFindings(kind), []);
});

test('status-subresource: a status without the subresource, and the subresource without a status', () => {
  const [f] = kindConventionFindings(kindOf({ spec, status: Type.Object({}) }));
  assert.equal(f?.check, 'status-subresource');
  assert.equal(f?.path, '.status');
  assert.equal(f?.kind, 'Gadget');
  assert.equal(f?.apiVersion, 'example.com/v1');
  assert.equal(f?.severity, 'error');
  assert.deepEqual(brief(kindConventionFindings(kindOf({ spec }, STATUS))), ['status-subresource ']);
});

test('no-floats: a number field, wherever it is', () => {
  const kind = kindOf({
    spec: Type.Object({ ratio: Type.Number(), list: Type.Array(Type.Number(), { maxItems: 2 }) }),
  });
  assert.deepEqual(brief(kindConventionFindings(kind)), ['no-floats .spec.ratio', 'no-floats .spec.list[*]']);
});

test('max-length: strings without maxLength and lists without maxItems; enums, dates and built-ins are bounded', () => {
  const kind = kindOf({
    spec: Type.Object({
      url: Type.String(),
      tags: Type.Array(Type.String({ maxLength: 10 })),
      labels: Type.Optional(Type.Record(Type.String(), Type.String())),
      when: Type.Optional(k8s.dateTime()),
      template: Type.Optional(k8s.podTemplateSpec()),
    }),
  });
  assert.deepEqual(brief(kindConventionFindings(kind)), [
    'max-length .spec.url',
    'max-length .spec.tags',
    'max-length .spec.labels.*',
  ]);
});

test('enum-pascal-case: each value that is not PascalCase, as a warning', () => {
  const kind = kindOf({
    spec: Type.Object({
      engine: Type.Union([Type.Literal('postgres'), Type.Literal('MySQL'), Type.Literal('ms-sql')]),
    }),
  });
  const findings = kindConventionFindings(kind);
  assert.deepEqual(brief(findings), ['enum-pascal-case .spec.engine', 'enum-pascal-case .spec.engine']);
  assert.match(findings[0]!.message, /"postgres"/);
  assert.match(findings[1]!.message, /"ms-sql"/);
  assert.ok(findings.every((f) => f.severity === 'warning'));
});

test('optional-or-required: required status fields, a default on a required field, list items with nothing required', () => {
  const kind = kindOf(
    {
      spec: Type.Object({
        replicas: Type.Integer({ default: 1 }),
        hosts: Type.Array(Type.Object({ name: Type.Optional(Type.String({ maxLength: 5 })) }), { maxItems: 3 }),
      }),
      status: Type.Object({ ready: Type.Integer() }),
    },
    STATUS,
  );
  assert.deepEqual(brief(kindConventionFindings(kind)), [
    'optional-or-required .spec.replicas',
    'optional-or-required .spec.hosts',
    'optional-or-required .status.ready',
  ]);
});

test('conditions: not a list map keyed by type, or items not metav1.Condition', () => {
  const loose = kindOf(
    {
      spec,
      status: Type.Object({
        conditions: Type.Optional(
          Type.Array(Type.Object({ type: Type.String({ maxLength: 10 }), status: Type.String({ maxLength: 10 }) }), {
            maxItems: 4,
          }),
        ),
      }),
    },
    STATUS,
  );
  const [f, ...rest] = kindConventionFindings(loose);
  assert.deepEqual(rest, []);
  assert.equal(f?.check, 'conditions');
  assert.equal(f?.path, '.status.conditions');
  assert.match(f!.message, /not a list map keyed by `type`/);
  assert.match(f!.message, /lack the required `lastTransitionTime`, `reason`, `message`/);
  assert.match(f!.message, /k8s\.conditions\(\)/);
});

test('an allowance drops the finding it names (check, kind, path) and nothing else', () => {
  const kind = kindOf({ spec: Type.Object({ engine: Type.Union([Type.Literal('postgres')]), url: Type.String() }) });
  const allowed = kindConventionFindings(kind, [
    { check: 'enum-pascal-case', kind: 'Gadget', path: '.spec.engine', reason: 'a command name' },
    { check: 'max-length', kind: 'Other', path: '.spec.url', reason: 'another kind' },
  ]);
  assert.deepEqual(brief(allowed), ['max-length .spec.url']);
});
