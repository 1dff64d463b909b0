import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import { InvalidArgumentError } from '../core/errors.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import type { ApplyConfiguration, StatusApplyConfiguration } from './apply-configuration.js';
import { isApplyConflict } from './apply-conflict-error.js';
import type { Client } from './contracts.js';
import { kinds } from './kinds.js';

// The type-level checks fail `npm run typecheck` when a typed apply stops being typed: each
// expected-error directive is itself an error once the line it guards compiles.

const web = { name: 'web', namespace: 'ns' };

test('an apply configuration is the kind type with every field optional, but not any field', () => {
  const partial: ApplyConfiguration<Deployment> = { metadata: web, spec: { replicas: 2 } };
  // A container in an apply configuration need not repeat the fields another manager owns.
  const container: ApplyConfiguration<Deployment> = {
    metadata: web,
    spec: { template: { spec: { containers: [{ name: 'app' }] } } },
  };
  // @ts-expect-error replicas is a number
  const wrongType: ApplyConfiguration<Deployment> = { metadata: web, spec: { replicas: 'two' } };
  // @ts-expect-error a Deployment's spec has no such field
  const unknownField: ApplyConfiguration<Deployment> = { metadata: web, spec: { replica: 2 } };
  // @ts-expect-error the name addresses the object: it is required
  const noName: ApplyConfiguration<Deployment> = { metadata: { namespace: 'ns' } };
  // @ts-expect-error the server sets managedFields; an apply that carries them is rejected
  const managed: ApplyConfiguration<Deployment> = { metadata: { ...web, managedFields: [] } };
  const status: StatusApplyConfiguration<Deployment> = { metadata: web, status: { replicas: 1 } };
  // @ts-expect-error a status apply configuration carries no spec
  const statusWithSpec: StatusApplyConfiguration<Deployment> = { metadata: web, spec: {} };
  assert.ok(partial && container && wrongType && unknownField && noName && managed && status && statusWithSpec);
});

test('apply(kind, config) sends the configuration as the kind and returns the typed object', async () => {
  const client: Client = new FakeClient();
  const deployment = {
    metadata: { ...web, labels: { app: 'web' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } },
    },
  };
  const applied = await client.apply(kinds.Deployment, deployment, { fieldManager: 'web-operator' });
  const replicas: number | undefined = applied.spec?.replicas;
  assert.equal(replicas, 2);
  assert.equal(applied.kind, 'Deployment');
  // The object form still works, as before.
  const again = await client.apply<Deployment>(
    { apiVersion: 'apps/v1', kind: 'Deployment', ...deployment },
    { fieldManager: 'web-operator' },
  );
  assert.equal(again.metadata?.resourceVersion, applied.metadata?.resourceVersion);
  const status = await client.applyStatus(
    kinds.Deployment,
    { metadata: web, status: { availableReplicas: 2 } },
    { fieldManager: 'web-operator' },
  );
  assert.equal(status.status?.availableReplicas, 2);
});

test('a typed apply that conflicts rejects with the fields and their owner', async () => {
  const client = new FakeClient();
  const config = { metadata: web, data: { color: 'red', size: 'L' } };
  await client.apply(kinds.ConfigMap, config, { fieldManager: 'kubectl' });
  await assert.rejects(
    client.apply(kinds.ConfigMap, { metadata: web, data: { color: 'blue' } }, { fieldManager: 'operator' }),
    (err: unknown) => {
      assert.ok(isApplyConflict(err), String(err));
      assert.deepEqual(
        err.conflicts.map((c) => [c.field, c.manager]),
        [['.data.color', 'kubectl']],
      );
      assert.match(err.message, /\.data\.color \(owned by "kubectl", by apply\)/);
      return true;
    },
  );
  const forced = await client.apply(
    kinds.ConfigMap,
    { metadata: web, data: { color: 'blue' } },
    { fieldManager: 'operator', force: true },
  );
  assert.equal(forced.data?.color, 'blue');
});

test('a typed apply without metadata.name is refused before any request', async () => {
  const client = new FakeClient();
  await assert.rejects(
    client.apply(kinds.ConfigMap, { metadata: {} } as never, { fieldManager: 'm' }),
    (err: unknown) => err instanceof InvalidArgumentError && /metadata\.name/.test(err.message),
  );
});
