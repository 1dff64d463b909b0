/**
 * A custom kind that embeds built-in types' schemas (a PodTemplateSpec, a JobTemplateSpec, an
 * ObjectReference) on kube-apiserver 1.20 and the 1.36 CRD-only server: the CRD is accepted, a
 * valid object is stored with its template's fields (metadata labels kept, unknown fields pruned),
 * and an invalid container field is rejected by the server with its own message.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TestEnv, type TestEnvServer } from '../testing/control-plane/test-env.js';
import { customResourceDefinition } from './custom-resource-definition.js';
import { RUNNER } from './testing/oracle-kinds.js';
import { validateAgainstSchema } from './validate-object.js';

const SERVERS: readonly { readonly label: string; readonly server: TestEnvServer; readonly namespace: string }[] = [
  { label: 'kube-apiserver 1.20', server: 'kube-apiserver', namespace: 'default' },
  { label: 'the 1.36 CRD-only API server', server: 'modern', namespace: 'builtin' },
];

for (const { label, server, namespace } of SERVERS) {
  describe(`built-in schemas embedded in a custom kind, on ${label}`, () => {
    let env: TestEnv;
    let seq = 0;
    const path = `/apis/builtin.operator-runtime.io/v1/namespaces/${namespace}/runners`;
    const runner = (spec: unknown) => ({
      apiVersion: RUNNER.apiVersion,
      kind: 'Runner',
      metadata: { name: `runner-${++seq}`, namespace },
      spec,
    });

    before(async () => {
      env = await TestEnv.start({ server });
    });
    after(async () => {
      await env?.stop();
    });

    test('the CRD embedding PodTemplateSpec, JobTemplateSpec and ObjectReference is accepted and Established', async () => {
      const crd = customResourceDefinition(RUNNER);
      console.log(`${label}: the Runner CRD is ${JSON.stringify(crd).length} bytes of JSON`);
      await env.installCrds([crd]);
    });

    test('a valid object is stored with its template: labels kept, unknown fields pruned', async () => {
      await env.installCrds([customResourceDefinition(RUNNER)]);
      const spec = {
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [
              {
                name: 'web',
                image: 'nginx',
                ports: [{ containerPort: 80 }],
                resources: { limits: { cpu: 1, memory: '64Mi' } },
                bogus: true,
              },
            ],
          },
        },
        jobTemplate: {
          spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'job', image: 'busybox' }] } } },
        },
        owner: { kind: 'Deployment', name: 'web', namespace },
      };
      const obj = runner(spec);
      assert.deepEqual(validateAgainstSchema(RUNNER, 'v1', obj), []);
      const res = await env.request<{ spec: typeof spec }>('POST', path, obj);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual(res.body.spec.template.metadata, { labels: { app: 'web' } });
      assert.equal(
        'bogus' in res.body.spec.template.spec.containers[0]!,
        false,
        "an unknown container field is pruned, as a Pod's would be",
      );
      assert.deepEqual(res.body.spec.template.spec.containers[0]!.resources, { limits: { cpu: 1, memory: '64Mi' } });
    });

    const invalid: { what: string; container: Record<string, unknown>; field: string; message: RegExp }[] = [
      {
        what: 'a container without name',
        container: { image: 'nginx' },
        field: 'spec.template.spec.containers.name',
        message: /Required value/,
      },
      {
        what: 'a port that is not an integer',
        container: { name: 'a', ports: [{ containerPort: 'http' }] },
        field: 'spec.template.spec.containers.ports.containerPort',
        message: /must be of type integer: "string"/,
      },
      {
        what: 'a quantity that is not one',
        container: { name: 'a', resources: { limits: { cpu: 'lots' } } },
        field: 'spec.template.spec.containers.resources.limits.cpu',
        message: /should match/,
      },
    ];
    for (const c of invalid) {
      test(`${c.what} is rejected by the server with its own message, and by validateAgainstSchema`, async () => {
        await env.installCrds([customResourceDefinition(RUNNER)]);
        const obj = runner({ template: { spec: { containers: [c.container] } } });
        assert.notDeepEqual(validateAgainstSchema(RUNNER, 'v1', obj), []);
        const res = await env.request<{
          message?: string;
          details?: { causes?: { field?: string; message?: string }[] };
        }>('POST', `${path}?dryRun=All`, obj);
        assert.equal(res.status, 422, JSON.stringify(res.body));
        // 1.20 names list items without their index; 1.36 with it (containers[0]).
        const cause = res.body.details?.causes?.find((x) => x.field?.replace(/\[\d+\]/g, '') === c.field);
        assert.ok(cause, `no cause for ${c.field}: ${JSON.stringify(res.body.details?.causes)}`);
        assert.match(res.body.message ?? '', c.message);
      });
    }
  });
}
