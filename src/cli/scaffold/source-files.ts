/**
 * The TypeScript sources of a scaffolded operator: its custom kind (a TypeBox schema through
 * `defineCustomKind`), a reconciler on `.for(kind)` reading with `ctx.get()`, the operator's
 * assembly, its process entry, `operator-runtime.config.ts`, a TestEnv integration test and a
 * simulation test (`simulate()` on the fake client and clock).
 * `scaffold-config.ts` builds the same kind and declarations in-process so `init` can write the
 * generated manifests before anything is installed; scripts/scaffold.int.test.ts checks the two
 * agree (`npm run generate` in the scaffold changes nothing).
 */
import type { FileToWrite } from '../write-files.js';
import type { ScaffoldNames } from './scaffold-names.js';

/** Spec fields of the scaffolded kind (kept in step with scaffold-config.ts). */
export const SCAFFOLD_MESSAGE_MAX_LENGTH = 256;
/** An object name's longest (a DNS subdomain): bounds the status field naming the ConfigMap. */
export const SCAFFOLD_NAME_MAX_LENGTH = 253;

export function kindSource(n: ScaffoldNames): string {
  return `/**
 * The ${n.kind} custom resource, written once as a schema: its TypeScript type and its CRD both come
 * from here (\`npm run generate\` writes config/crd.yaml).
 */
import type { ObjectOf } from 'operator-runtime';
import { Type, defineCustomKind, k8s } from 'operator-runtime/crd';

export const ${n.kind}Spec = Type.Object({
  /** What the operator publishes in the ${n.kind}'s ConfigMap. */
  message: Type.String({ minLength: 1, maxLength: ${SCAFFOLD_MESSAGE_MAX_LENGTH} }),
});

export const ${n.kind}Status = Type.Object({
  /** The generation this status describes. */
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
  /** The ConfigMap holding the message. */
  configMap: Type.Optional(Type.String({ maxLength: ${SCAFFOLD_NAME_MAX_LENGTH} })),
  /** Ready, Reconciling, Stalled (kstatus): what Flux, Argo CD and \`kubectl wait\` read. */
  conditions: Type.Optional(k8s.conditions({ maxItems: 16 })),
});

export const ${n.constant} = defineCustomKind({
  group: '${n.group}',
  names: { kind: '${n.kind}', plural: '${n.plural}', singular: '${n.singular}' },
  scope: 'Namespaced',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: { spec: ${n.kind}Spec, status: ${n.kind}Status },
      subresources: { status: {} },
    },
  ],
});

export type ${n.kind} = ObjectOf<typeof ${n.constant}>;
`;
}

export function reconcilerSource(n: ScaffoldNames): string {
  return `/**
 * The ${n.kind} controller: what a ${n.kind} needs is declared as dependents, each built from it —
 * here one ConfigMap \`<name>-message\` holding its message, owned by it (deleted with it). The
 * runtime applies them in dependency order and writes one condition per dependent plus Ready,
 * Reconciling and Stalled (kstatus) to the ${n.kind}'s status. The \`writes\` declarations are what
 * the generated RBAC grants (\`npm run generate\` writes config/rbac.yaml).
 */
import { kinds, type Manager } from 'operator-runtime';
import { dependentsOf } from 'operator-runtime/helpers';
import { ${n.constant} } from './${n.file}.js';

export const CONTROLLER_NAME = '${n.controller}';

/**
 * A ${n.kind}'s dependents. Add more with \`.add({ name, kind, desired, dependsOn, readyWhen })\`:
 * they are applied in \`dependsOn\` order, independent ones in parallel, and one whose
 * \`readyWhen\` says no holds back what depends on it (operator-runtime's docs/your-first-operator.md).
 */
export const dependents = dependentsOf(${n.constant}, { fieldManager: CONTROLLER_NAME })
  .add({
    name: 'message',
    kind: kinds.ConfigMap,
    desired: (${n.singular}) => ({
      metadata: { name: \`\${${n.singular}.metadata.name}-message\`, namespace: ${n.singular}.metadata.namespace },
      data: { message: ${n.singular}.spec.message },
    }),
  })
  .build();

export function register${n.kind}Controller(manager: Manager): void {
  manager
    .controller(CONTROLLER_NAME)
    .for(${n.constant})
    .owns(kinds.ConfigMap)
    .writes(kinds.ConfigMap, ['create', 'patch'])
    .writes(${n.constant}, ['patch'], { subresource: 'status' })
    .complete(async (_request, { get, signal, log }) => {
      // The ${n.kind} as the cache has it now, typed by .for(); undefined once it is deleted.
      const ${n.singular} = await get();
      if (!${n.singular}) return;
      // Applies what is missing or changed (nothing is sent when all is as desired), then writes the
      // conditions, status.observedGeneration and the fields returned here to the status.
      const report = await dependents.reconcile(manager.client, ${n.singular}, {
        signal,
        logger: log,
        clock: manager.clock,
        status: (outcome) => ({ configMap: outcome.object('message')?.metadata?.name }),
      });
      return report.result; // done, or come back while a dependent is not ready
    });
}
`;
}

export function operatorSource(n: ScaffoldNames): string {
  return `/**
 * The operator: a Manager with the ${n.kind} controller registered. main.ts runs it; the tests and
 * operator-runtime.config.ts build it too.
 */
import { Manager, type Client, type Logger, type ManagerOptions } from 'operator-runtime';
import type { Registry } from 'prom-client';
import { register${n.kind}Controller } from './${n.file}-reconciler.js';

export interface OperatorOptions {
  readonly client: Client;
  readonly registry?: Registry;
  readonly logger?: Logger;
  /** The simulation's fake clock in operator.simulation.test.ts. @defaultValue the real clock */
  readonly clock?: ManagerOptions['clock'];
  /** 0 picks a free port. @defaultValue 8080 */
  readonly metricsPort?: number;
  /** 0 picks a free port. @defaultValue 8081 */
  readonly healthPort?: number;
  /** Plan mode (\`--plan\`): every write a server-side dry run, reported instead of persisted. @defaultValue off */
  readonly plan?: ManagerOptions['plan'];
}

export function createOperator(options: OperatorOptions): Manager {
  const manager = new Manager(options);
  register${n.kind}Controller(manager);
  return manager;
}
`;
}

export function mainSource(n: ScaffoldNames): string {
  return `/**
 * The ${n.name} process: connects with KUBECONFIG (or in-cluster), runs until SIGTERM, then drains.
 * With \`--plan\` it changes nothing: every write is a server-side dry run, printed as a JSON line on
 * stdout (logs go to stderr), and it exits once every object was reconciled once.
 */
import { KubeClient, createLogger, createMetricsRegistry, runUntilSignal } from 'operator-runtime';
import { createOperator } from './operator.js';

const plan = process.argv.includes('--plan');
const logger = createLogger({ name: '${n.name}', ...(plan ? { destination: process.stderr } : {}) });
const registry = createMetricsRegistry({ defaultMetrics: true });
const client = await KubeClient.fromDefault({ registry, logger });
const manager = createOperator({ client, registry, logger, ...(plan ? { plan: {} } : {}) });
const code = await runUntilSignal(manager, { logger });
await client.close();
process.exit(code);
`;
}

export function configSource(n: ScaffoldNames): string {
  return `/**
 * What \`npx operator-runtime generate manifests\` reads to write config/: the CRD from the kind's
 * schema, RBAC from the controller's declarations, and the Deployment that runs the image.
 */
import { defineConfig } from 'operator-runtime/codegen';
import { offlineClient } from 'operator-runtime/rbac';
import { ${n.constant} } from './src/${n.file}.js';
import { createOperator } from './src/operator.js';

export default defineConfig({
  name: '${n.name}',
  namespace: '${n.namespace}',
  image: 'example.com/${n.name}:0.1.0',
  kinds: [${n.constant}],
  // Built, never started: offlineClient() makes no request.
  manager: () => createOperator({ client: offlineClient() }),
  outDir: 'config',
});
`;
}

export function integrationTestSource(n: ScaffoldNames): string {
  return `/**
 * The operator against a real kube-apiserver and etcd (operator-runtime/testing's TestEnv; set
 * OPERATOR_RUNTIME_ASSETS to the folder holding etcd and kube-apiserver), or against a cluster you
 * already run (OPERATOR_RUNTIME_USE_EXISTING_CLUSTER=true with KUBECONFIG: kind, k3d…; the CRD and
 * the tests' namespaces are removed afterwards): a ${n.kind} gets its ConfigMap and its status, and a
 * change of message reaches the ConfigMap. Each test works in a namespace of its own.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, kinds, type Manager } from 'operator-runtime';
import { customResourceDefinition } from 'operator-runtime/crd';
import { TestEnv } from 'operator-runtime/testing';
import { Registry } from 'prom-client';
import { ${n.constant} } from './${n.file}.js';
import { createOperator } from './operator.js';

let env: TestEnv;
let client: KubeClient;
let manager: Manager;
const stop = new AbortController();
let running: Promise<void>;

/** Polls \`check\` until it returns a value (not undefined), for at most 20 s. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(\`timed out waiting for \${what}\`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

before(async () => {
  env = await TestEnv.start({
    crds: [customResourceDefinition(${n.constant})],
    // As OpenShift and hardened clusters: blockOwnerDeletion needs update on ${n.plural}/finalizers.
    ownerReferencesPermissionEnforcement: true,
  });
  const registry = new Registry();
  client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig, registry });
  manager = createOperator({ client, registry, metricsPort: 0, healthPort: 0 });
  running = manager.start(stop.signal);
});

// Runs even when a test fails: stops the operator, then the env (which, against an existing
// cluster, deletes what it created there).
after(async () => {
  stop.abort();
  await running?.catch(() => undefined);
  await client?.close();
  await env?.stop();
});

test('a ${n.kind} gets a ConfigMap with its message, and its status names it', async () => {
  const namespace = await env.createNamespace();
  await client.create({ apiVersion: '${n.group}/v1', kind: '${n.kind}', metadata: { name: 'hello', namespace }, spec: { message: 'hello, world' } });
  const configMap = await eventually('the ConfigMap', async () => {
    const cm = await client.get(kinds.ConfigMap, 'hello-message', { namespace });
    return cm.data?.message === 'hello, world' ? cm : undefined;
  });
  assert.equal(configMap.metadata?.ownerReferences?.[0]?.kind, '${n.kind}');
  const ${n.singular} = await eventually('the status', async () => {
    const current = await client.get(${n.constant}, 'hello', { namespace });
    return current.status?.configMap ? current : undefined;
  });
  assert.equal(${n.singular}.status?.configMap, 'hello-message');
  assert.equal(${n.singular}.status?.observedGeneration, ${n.singular}.metadata.generation);
  const ready = ${n.singular}.status?.conditions?.find((c) => c.type === 'Ready');
  assert.equal(ready?.status, 'True');
  assert.equal(ready?.observedGeneration, ${n.singular}.metadata.generation);
});

test('a changed message reaches the ConfigMap', async () => {
  const namespace = await env.createNamespace();
  await client.create({ apiVersion: '${n.group}/v1', kind: '${n.kind}', metadata: { name: 'hello', namespace }, spec: { message: 'first' } });
  await eventually('the first message', async () => {
    const cm = await client.get(kinds.ConfigMap, 'hello-message', { namespace });
    return cm.data?.message === 'first' ? true : undefined;
  });
  await client.patch(${n.constant}, 'hello', { spec: { message: 'changed' } }, { namespace, type: 'merge' });
  await eventually('the new message', async () => {
    const cm = await client.get(kinds.ConfigMap, 'hello-message', { namespace });
    return cm.data?.message === 'changed' ? true : undefined;
  });
});
`;
}

export function simulationTestSource(n: ScaffoldNames): string {
  return `/**
 * The operator under simulate() (operator-runtime's docs/simulation.md): createOperator, unchanged,
 * on the fake client and clock, through creates, changes and deletes, under seeded crashes,
 * restarts against stale caches, lost events, API errors and leader changes — in seconds, no
 * cluster needed. A failure prints its seed, the fewest faults that still fail and the command that
 * replays it (SIM_SEED=<n>).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kinds } from 'operator-runtime';
import { customResourceDefinition } from 'operator-runtime/crd';
import { simulate, simulationSeeds } from 'operator-runtime/testing/simulation';
import { ${n.constant} } from './${n.file}.js';
import { createOperator } from './operator.js';

test('the operator converges, and ends as without faults, under seeded faults', async () => {
  const report = await simulate({
    setup: (options) => createOperator({ ...options, metricsPort: 0, healthPort: 0 }),
    scenario: [
      { type: 'create', object: { ...${n.constant}, metadata: { name: 'first', namespace: 'default' }, spec: { message: 'hello' } } },
      { type: 'create', object: { ...${n.constant}, metadata: { name: 'second', namespace: 'default' }, spec: { message: 'hi' } } },
      { type: 'patch', target: { ...${n.constant}, namespace: 'default', name: 'first' }, patch: { spec: { message: 'hello again' } } },
      { type: 'delete', target: { ...${n.constant}, namespace: 'default', name: 'second' } },
      // Someone edits the owned ConfigMap: the operator must put the message back.
      { type: 'patch', target: { ...kinds.ConfigMap, namespace: 'default', name: 'first-message' }, patch: { data: { message: 'edited' } } },
    ],
    primaryKinds: [${n.constant}],
    ownedKinds: [kinds.ConfigMap],
    cluster: { crds: [customResourceDefinition(${n.constant})] },
    seeds: simulationSeeds(100),
    replayFile: 'src/operator.simulation.test.ts',
  });
  assert.deepEqual(report.failures, [], report.format());
});
`;
}

export function sourceFiles(n: ScaffoldNames): FileToWrite[] {
  return [
    { path: `src/${n.file}.ts`, content: kindSource(n) },
    { path: `src/${n.file}-reconciler.ts`, content: reconcilerSource(n) },
    { path: 'src/operator.ts', content: operatorSource(n) },
    { path: 'src/main.ts', content: mainSource(n) },
    { path: 'src/operator.int.test.ts', content: integrationTestSource(n) },
    { path: 'src/operator.simulation.test.ts', content: simulationTestSource(n) },
    { path: 'operator-runtime.config.ts', content: configSource(n) },
  ];
}
