/**
 * The API server as the oracle for our schemas (issue 24). For every custom kind in the test
 * suite: its generated CRD is accepted by kube-apiserver 1.20 and by the 1.36 CRD-only server, and
 * random objects of each version's schema — valid ones, and near-valid ones with one node broken —
 * get the same verdict from `validateAgainstSchema` as from the server (a dry-run create). Every
 * disagreement fails the test, naming the object, the mutation and both answers.
 *
 * Modelled differences, the only ones allowed:
 * - CEL rules: 1.20 ignores them; 1.36 enforces them and validateAgainstSchema does not evaluate
 *   them. A 1.36 rejection whose every cause is a CEL rule of the schema counts as agreement.
 * - kube-apiserver 1.20 as built here (Go 1.19) reads `""` as null in its type check (see
 *   StructuralValidateOptions.emptyStringIsNull): its verdicts are compared with that model, and
 *   the objects where the model and validateAgainstSchema differ are counted.
 * - Both servers skip the type check of a string with a (supported) format when the value is a
 *   list, and accept it; validateAgainstSchema keeps refusing it. Counted, not failed.
 * - With a status subresource, a create ignores `status`; the objects are sent without one.
 * - Formats in SERVER_ONLY_FORMATS and IPv4 addresses with leading zeros (1.36 accepts them,
 *   1.20 built with Go ≥ 1.17 does not) are not generated (schema-arbitrary.ts).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DATABASE } from '../../examples/database-operator/src/database.js';
import { TestEnv, type TestEnvServer } from '../testing/control-plane/test-env.js';
import type { AnyCustomKind } from './custom-kind.js';
import { customResourceDefinition } from './custom-resource-definition.js';
import type { JSONSchemaProps } from './schema-props.js';
import { SERVER_FORMATS, normalizedFormat } from './formats.js';
import { structuralValidate, withServerDefaults } from './structural-validate.js';
import { GADGET } from './testing/gadget-kind.js';
import { RUNNER, SAMPLE, SPECIMEN } from './testing/oracle-kinds.js';
import { nearValidValue, validValue, type Mutated } from './testing/schema-arbitrary.js';
import { validateAgainstSchema } from './validate-object.js';

const SEED = 20261201;
/** Objects per kind version and server: valid and near-valid, about half each. */
const RUNS = Number(process.env.OPERATOR_RUNTIME_ORACLE_RUNS ?? 150);
const CONCURRENCY = 4;

const KINDS: readonly AnyCustomKind[] = [GADGET, DATABASE, SPECIMEN, SAMPLE, RUNNER];
const SERVERS: readonly { readonly label: string; readonly server: TestEnvServer; readonly namespace: string }[] = [
  { label: 'kube-apiserver 1.20', server: 'kube-apiserver', namespace: 'default' },
  // The CRD-only server serves no Namespace objects; any namespace name is accepted.
  { label: 'the 1.36 CRD-only API server', server: 'modern', namespace: 'oracle' },
];

interface Cause {
  readonly field?: string;
  readonly message?: string;
  readonly reason?: string;
}

interface Verdict {
  readonly object: unknown;
  readonly mutation: string;
  readonly ours: readonly { path: string; message: string }[];
  /** What the model of this server says: validateAgainstSchema's rules, with the server's modelled quirks. */
  readonly model: readonly { path: string; message: string }[];
  readonly status: number;
  readonly causes: readonly Cause[];
  readonly message: string;
}

for (const { label, server, namespace } of SERVERS) {
  describe(`validateAgainstSchema against ${label}`, () => {
    let env: TestEnv;
    const crds = KINDS.map((k) => customResourceDefinition(k));

    before(async () => {
      env = await TestEnv.start({ server });
    });
    after(async () => {
      await env?.stop();
    });

    test('every CRD the generator emits in the suite is accepted and becomes Established', async () => {
      // installCrds fails with the server's message for a rejected CRD and waits for Established.
      await env.installCrds(crds);
      for (const crd of crds) {
        const res = await env.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
          'GET',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
        );
        assert.equal(
          res.body.status?.conditions?.find((c) => c.type === 'Established')?.status,
          'True',
          crd.metadata.name,
        );
      }
    });

    test('what defineCustomKind refuses, the server refuses too (a CRD written by hand with each construct)', async () => {
      for (const [what, field, fragment] of REFUSED) {
        const res = await env.request<{ message?: string }>(
          'POST',
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All',
          handWrittenCrd(field),
        );
        if (fragment === 'accepted on 1.36') {
          assert.equal(res.status, server === 'modern' ? 201 : 422, `${what}: ${res.body?.message}`);
          continue;
        }
        assert.equal(res.status, 422, `${what}: the server accepted it`);
        assert.ok(res.body?.message?.includes(fragment), `${what}: ${res.body?.message}`);
      }
    });

    test('a nullable enum: the server refuses an explicit null with or without null in the enum (why defineCustomKind refuses it)', async () => {
      const without = handWrittenCrd({ type: 'string', enum: ['a', 'b'], nullable: true }, 'nullenums');
      await env.installCrds([without]);
      const path = `/apis/refused.operator-runtime.io/v1/${server === 'modern' ? 'namespaces/oracle/' : 'namespaces/default/'}nullenums?dryRun=All`;
      const res = await env.request<{ message?: string }>('POST', path, {
        apiVersion: 'refused.operator-runtime.io/v1',
        kind: 'Nullenum',
        metadata: { name: 'n' },
        spec: { field: null },
      });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.match(res.body?.message ?? '', /Unsupported value: "?null"?/);
      if (server !== 'modern') return; // 1.20 rejects the CRD with null in the enum (REFUSED above)
      const listed = handWrittenCrd({ type: 'string', enum: ['a', 'b', null], nullable: true }, 'nulllisteds');
      await env.installCrds([listed]);
      const again = await env.request<{ message?: string }>('POST', path.replace('nullenums', 'nulllisteds'), {
        apiVersion: 'refused.operator-runtime.io/v1',
        kind: 'Nulllisted',
        metadata: { name: 'n' },
        spec: { field: null },
      });
      assert.equal(again.status, 422, JSON.stringify(again.body));
      assert.match(again.body?.message ?? '', /Unsupported value: "?null"?/);
    });

    for (const kind of KINDS) {
      for (const version of kind.definition.versions.filter((v) => v.served)) {
        test(`${kind.kind} ${version.name}: the server and validateAgainstSchema agree on ${RUNS} generated objects`, async () => {
          await env.installCrds(crds);
          const crd = crds.find((c) => c.spec.names.kind === kind.kind)!;
          const schema = crd.spec.versions.find((v) => v.name === version.name)!.schema.openAPIV3Schema;
          const hasStatus = version.subresources?.status !== undefined;
          const samples = fc.sample(
            fc.oneof(
              validValue(schema).map((value): Mutated => ({ value, mutation: 'none (valid)' })),
              nearValidValue(schema),
            ),
            { seed: SEED, numRuns: RUNS },
          );
          const verdicts: Verdict[] = [];
          const path = `/apis/${kind.group}/${version.name}/${kind.scope === 'Namespaced' ? `namespaces/${namespace}/` : ''}${kind.plural}?dryRun=All`;
          await inBatches(samples, CONCURRENCY, async (sample, i) => {
            const fields = { ...(sample.value as Record<string, unknown>) };
            if (hasStatus) delete fields.status;
            const object = {
              apiVersion: `${kind.group}/${version.name}`,
              kind: kind.kind,
              metadata: { name: `oracle-${i}`, ...(kind.scope === 'Namespaced' ? { namespace } : {}) },
              ...fields,
            };
            const ours = validateAgainstSchema(kind, version.name, object);
            const model =
              server === 'kube-apiserver'
                ? structuralValidate(withServerDefaults(fields, schema), schema, '', { emptyStringIsNull: true })
                : ours;
            const res = await env.request<{ message?: string; details?: { causes?: Cause[] } }>('POST', path, object);
            verdicts.push({
              object,
              mutation: sample.mutation,
              ours,
              model,
              status: res.status,
              causes: res.body?.details?.causes ?? [],
              message: res.body?.message ?? '',
            });
          });
          const rules = celMessages(schema);
          const disagreements: string[] = [];
          let celOnly = 0;
          let rejected = 0;
          let emptyStringQuirk = 0;
          let formatListLeniency = 0;
          for (const v of verdicts) {
            if (v.status !== 201 && v.status !== 422) {
              disagreements.push(describeVerdict(v, `unexpected status ${v.status}`));
              continue;
            }
            const serverAccepts = v.status === 201;
            if (!serverAccepts) rejected++;
            if ((v.model.length === 0) !== (v.ours.length === 0)) emptyStringQuirk++;
            const oursAccepts = v.model.length === 0;
            if (serverAccepts === oursAccepts) continue;
            if (
              serverAccepts &&
              v.model.every(
                (o) => o.message === 'must be string, not array' && hasServerFormat(schemaAt(schema, o.path)),
              )
            ) {
              formatListLeniency++;
              continue;
            }
            if (
              server === 'modern' &&
              oursAccepts &&
              v.causes.length > 0 &&
              v.causes.every((c) => isCelCause(c, rules))
            ) {
              celOnly++;
              continue;
            }
            disagreements.push(
              describeVerdict(
                v,
                serverAccepts
                  ? 'the server accepts, validateAgainstSchema rejects'
                  : 'the server rejects, validateAgainstSchema accepts',
              ),
            );
          }
          console.log(
            `${label}: ${kind.kind} ${version.name}: ${verdicts.length} objects generated, ${rejected} rejected by the server` +
              `${server === 'modern' ? ` (${celOnly} by CEL rules only, modelled)` : ` (${emptyStringQuirk} judged differently because of the "" quirk, modelled)`}` +
              `, ${formatListLeniency} lists accepted for a formatted string (modelled), ${disagreements.length} disagreements`,
          );
          assert.deepEqual(
            disagreements.slice(0, 15),
            [],
            `${disagreements.length} disagreements between the server and validateAgainstSchema`,
          );
        });
      }
    }
  });
}

/** Constructs defineCustomKind refuses, each as the field of a hand-written CRD, and the server's words. */
const REFUSED: readonly (readonly [string, JSONSchemaProps, string])[] = [
  ['a lookahead pattern', { type: 'string', pattern: '^(?!admin).*$' }, 'invalid or unsupported Perl syntax'],
  ['a backreference', { type: 'string', pattern: '(a)\\1' }, 'invalid escape sequence'],
  ['an integer defaulted to a string', { type: 'integer', default: 'three' }, 'must be of type integer'],
  ['a default below its minimum', { type: 'integer', minimum: 1, default: 0 }, 'should be greater than or equal to 1'],
  [
    'a default missing a required field',
    { type: 'object', required: ['a'], properties: { a: { type: 'string', default: 'x' } }, default: {} },
    'Required value',
  ],
  [
    'a default with an unknown field',
    { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 1 } },
    'must not have unknown fields',
  ],
  // 1.20 cannot read null in an enum (the CRD is rejected); 1.36 takes the CRD and still refuses the null.
  ['null in a nullable enum', { type: 'string', enum: ['a', 'b', null], nullable: true }, 'accepted on 1.36'],
];

function handWrittenCrd(field: JSONSchemaProps, plural = 'refusals'): object {
  const kind = plural[0]!.toUpperCase() + plural.slice(1, -1);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.refused.operator-runtime.io` },
    spec: {
      group: 'refused.operator-runtime.io',
      names: { kind, plural, singular: plural.slice(0, -1) },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { field } } } },
          },
        },
      ],
    },
  };
}

function describeVerdict(v: Verdict, what: string): string {
  const server =
    v.status === 201
      ? 'accepted'
      : `${v.status} ${v.causes.map((c) => `${c.field}: ${c.message}`).join('; ') || v.message}`;
  const ours = v.model.map((o) => `${o.path}: ${o.message}`).join('; ') || 'no violations';
  return `${what} — mutation ${v.mutation}; server: ${server}; ours: ${ours}; object: ${JSON.stringify(v.object)}`;
}

/** The messages a CEL rule failure carries: its message, or "failed rule: <rule>". */
function celMessages(schema: JSONSchemaProps): string[] {
  const out: string[] = [];
  const walk = (s: JSONSchemaProps | undefined) => {
    if (!s) return;
    for (const r of s['x-kubernetes-validations'] ?? []) out.push(r.message ?? `failed rule: ${r.rule}`);
    Object.values(s.properties ?? {}).forEach(walk);
    walk(s.additionalProperties);
    walk(s.items);
  };
  walk(schema);
  return out;
}

/** The schema node a JSON pointer from validateAgainstSchema names. */
function schemaAt(schema: JSONSchemaProps, pointer: string): JSONSchemaProps | undefined {
  let node: JSONSchemaProps | undefined = schema;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (!node) return undefined;
    node = node.type === 'array' ? node.items : (node.properties?.[key] ?? node.additionalProperties);
  }
  return node;
}

function hasServerFormat(node: JSONSchemaProps | undefined): boolean {
  return node?.format !== undefined && SERVER_FORMATS.has(normalizedFormat(node.format));
}

function isCelCause(c: Cause, rules: readonly string[]): boolean {
  return rules.some((r) => c.message?.includes(r) === true);
}

async function inBatches<T>(
  items: readonly T[],
  size: number,
  run: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) {
        const i = next++;
        await run(items[i]!, i);
      }
    }),
  );
}
