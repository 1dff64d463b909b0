/**
 * Two controllers writing the same object, the way an operator grows a second one: a Site
 * (`spec.hostname`, `replicas`, `tls`) is deployed by the `site-deploy` controller (a ConfigMap
 * `<name>-deploy`, condition `Deployed`) and given a certificate by the `site-tls` controller (a
 * ConfigMap `<name>-tls` while `spec.tls`, condition `TLSReady`). Both write `status.conditions` of
 * the one Site, each its own condition with the generation it acted on; neither is woken by the
 * other's status write (the default primary predicate passes generation changes only), so what one
 * overwrites of the other's stays overwritten. Written in a fourth style: two small controllers,
 * conditions through `setCondition`, no finalizer.
 *
 * The correct controllers set their condition into the list they read and write it under that
 * read's resourceVersion (`patchStatus`): a write in between answers 409 and the reconcile retries
 * from the present.
 *
 * Planted bugs (both in `site-tls`, the second writer):
 * - `replaces-conditions`: writes `conditions: [its own]`, dropping the other controller's;
 * - `unversioned-conditions`: writes the list from its cached read without a resourceVersion: when
 *   `site-deploy` wrote meanwhile (the two reconcile the same change at once), its newer `Deployed`
 *   is overwritten by the one the cache held.
 */
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { isNotFound } from '../../../client/api-error.js';
import type { Client } from '../../../client/contracts.js';
import { kind } from '../../../client/kind.js';
import { kinds } from '../../../client/kinds.js';
import type { Clock } from '../../../core/clock.js';
import type { KubeObject } from '../../../core/object-key.js';
import { getCondition, setCondition, type Condition, type ConditionInput } from '../../../helpers/conditions.js';
import { setControllerReference } from '../../../helpers/owner-references.js';
import { patchStatus } from '../../../helpers/status.js';
import { Manager } from '../../../manager/manager.js';
import type { KindRegistration } from '../../fake-client/kind-registry.js';
import { generateScenario } from '../scenario-generator.js';
import type { OperatorSetup, SimulationOptions } from '../simulate.js';

export interface Site extends KubeObject {
  metadata: NonNullable<KubeObject['metadata']> & { name: string; namespace: string };
  spec: { hostname: 'shop.example' | 'blog.example' | 'docs.example'; replicas: number; tls?: boolean };
  status?: { conditions?: Condition[] };
}

export const SITE = kind<Site>('web.example.com/v1', 'Site');
export const DEPLOYED = 'Deployed';
export const TLS_READY = 'TLSReady';

export const SITE_KIND: KindRegistration = {
  apiVersion: SITE.apiVersion,
  kind: SITE.kind,
  plural: 'sites',
  statusSubresource: true,
  schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['hostname', 'replicas'],
        properties: {
          hostname: { type: 'string', enum: ['shop.example', 'blog.example', 'docs.example'] },
          replicas: { type: 'integer', minimum: 1, maximum: 3 },
          tls: { type: 'boolean' },
        },
      },
      status: {
        type: 'object',
        properties: {
          conditions: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      },
    },
  },
};

export type SiteBug = 'replaces-conditions' | 'unversioned-conditions';

export function siteOperator(bug?: SiteBug): OperatorSetup {
  return ({ client, clock, logger, registry }) => {
    const manager = new Manager({ client, clock, logger, registry, metricsPort: 0, healthPort: 0 });
    manager
      .controller('site-deploy')
      .for(SITE)
      .owns(kinds.ConfigMap)
      .complete(async (_request, ctx) => {
        const site = await ctx.get();
        if (!site || site.metadata.deletionTimestamp) return;
        await applyConfigMap(manager.client, site, 'deploy', {
          hostname: site.spec.hostname,
          replicas: String(site.spec.replicas),
        });
        await writeCondition(manager.client, clock, site, { type: DEPLOYED, status: 'True', reason: 'Applied' });
      });
    manager
      .controller('site-tls')
      .for(SITE)
      .owns(kinds.ConfigMap)
      .complete(async (_request, ctx) => {
        const site = await ctx.get();
        if (!site || site.metadata.deletionTimestamp) return;
        if (site.spec.tls) await applyConfigMap(manager.client, site, 'tls', { hostname: site.spec.hostname });
        else await deleteConfigMap(manager.client, site, 'tls');
        const mine: ConditionInput = {
          type: TLS_READY,
          status: 'True',
          reason: site.spec.tls ? 'Issued' : 'NotRequested',
        };
        if (bug === 'replaces-conditions') {
          const conditions = setCondition([], { ...mine, observedGeneration: site.metadata.generation }, { clock });
          await patchStatus(manager.client, site, { conditions }, { setObservedGeneration: false });
        } else if (bug === 'unversioned-conditions') {
          const conditions = setCondition(
            site.status?.conditions,
            { ...mine, observedGeneration: site.metadata.generation },
            { clock },
          );
          if (JSON.stringify(conditions) !== JSON.stringify(site.status?.conditions))
            await manager.client.patchStatus(
              SITE,
              site.metadata.name,
              { status: { conditions } },
              { namespace: site.metadata.namespace },
            );
        } else await writeCondition(manager.client, clock, site, mine);
      });
    return manager;
  };
}

/** Sets one condition into the list as read, under the read's resourceVersion (409 if anyone wrote since). */
async function writeCondition(client: Client, clock: Clock, site: Site, input: ConditionInput): Promise<void> {
  const conditions = setCondition(
    site.status?.conditions,
    { ...input, observedGeneration: site.metadata.generation },
    { clock },
  );
  await patchStatus(client, site, { conditions }, { setObservedGeneration: false });
}

async function applyConfigMap(client: Client, site: Site, suffix: string, data: Record<string, string>): Promise<void> {
  const name = `${site.metadata.name}-${suffix}`;
  const { namespace } = site.metadata;
  let current: ConfigMap | undefined;
  try {
    current = await client.get<ConfigMap>(kinds.ConfigMap, name, { namespace });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (!current) {
    const cm: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
    // AlreadyExists (a cache behind) fails the reconcile: retried with backoff, then patched.
    await client.create(setControllerReference(site, cm));
    return;
  }
  if (JSON.stringify(current.data) !== JSON.stringify(data))
    await client.patch(kinds.ConfigMap, name, { data }, { type: 'merge', namespace });
}

async function deleteConfigMap(client: Client, site: Site, suffix: string): Promise<void> {
  try {
    await client.delete(kinds.ConfigMap, `${site.metadata.name}-${suffix}`, { namespace: site.metadata.namespace });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Both controllers' conditions present and about the current generation. */
export function siteConverged(obj: KubeObject): boolean {
  const site = obj as Site;
  return [DEPLOYED, TLS_READY].every(
    (type) => getCondition(site.status?.conditions, type)?.observedGeneration === site.metadata.generation,
  );
}

/** Each live Site's ConfigMaps as its spec says, and both conditions about its current generation. */
export function siteInvariants(objects: readonly KubeObject[]): string[] {
  const sites = (objects.filter((o) => o.kind === SITE.kind) as Site[]).filter((s) => !s.metadata.deletionTimestamp);
  const maps = objects.filter((o) => o.kind === 'ConfigMap') as ConfigMap[];
  const problems: string[] = [];
  for (const site of sites) {
    const name = site.metadata.name;
    const deploy = maps.find((m) => m.metadata?.name === `${name}-deploy`);
    if (deploy?.data?.replicas !== String(site.spec.replicas) || deploy.data.hostname !== site.spec.hostname)
      problems.push(`Site ${name}: ConfigMap ${name}-deploy holds ${JSON.stringify(deploy?.data)}, not its spec`);
    const tls = maps.some((m) => m.metadata?.name === `${name}-tls`);
    if (tls !== Boolean(site.spec.tls))
      problems.push(
        `Site ${name}: ConfigMap ${name}-tls ${tls ? 'present' : 'missing'} with tls ${Boolean(site.spec.tls)}`,
      );
    for (const type of [DEPLOYED, TLS_READY]) {
      const c = getCondition(site.status?.conditions, type);
      if (c?.observedGeneration !== site.metadata.generation)
        problems.push(
          `Site ${name}: condition ${type} ${c ? `is about generation ${c.observedGeneration}` : 'is missing'}, the Site is at ${site.metadata.generation} — another writer overwrote it`,
        );
    }
  }
  return problems;
}

/** Generated scenarios: creates, spec changes (another writer's too), deletes of three Sites. */
export const siteScenario = (seed: number) => generateScenario({ kind: SITE_KIND, seed });

/** The simulation of the two Site controllers (with `bug` in the second writer, or correct), over generated scenarios. */
export function siteSimulation(bug?: SiteBug): SimulationOptions {
  return {
    setup: siteOperator(bug),
    scenario: siteScenario,
    primaryKinds: [SITE],
    ownedKinds: [kinds.ConfigMap],
    cluster: { kinds: [SITE_KIND] },
    converged: siteConverged,
    invariants: siteInvariants,
  };
}
