/**
 * With sharding, a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, Kubernetes 1.30+)
 * and its binding: only the operator's ServiceAccount may add, change or remove the assignment
 * labels of its ring (shard, grant, drain, released) on the sharded primary kinds. The protocol is
 * safe against one label edited by anyone else (docs/sharding.md); this closes the rest — a write
 * that changes several of them at once, such as a GitOps revert of the whole label set.
 */
import { InvalidOptionError } from '../core/errors.js';
import type { ResourceType } from '../client/discovery.js';
import type { AnyCustomKind } from '../crd/custom-kind.js';
import { BUILTIN_RESOURCES } from '../rbac/builtin-resources.js';
import { assignmentLabels } from '../sharding/sharding-options.js';
import type { OperatorProjectConfig } from './config.js';

export const shardLabelPolicyName = (config: OperatorProjectConfig): string => `${config.name}-shard-labels`;

/** The API group of `apiVersion` ('' for the core group). */
const groupOf = (apiVersion: string): string =>
  apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';

/** The plural resource of a sharded kind, from the config's custom kinds or the built-in table. */
function resourceOf(type: ResourceType, kinds: readonly AnyCustomKind[]): { group: string; resource: string } {
  const group = groupOf(type.apiVersion);
  const custom = kinds.find((k) => k.group === group && k.kind === type.kind);
  if (custom) return { group, resource: custom.plural };
  const builtin = BUILTIN_RESOURCES.get(`${group}/${type.kind}`);
  if (builtin) return { group, resource: builtin.resource };
  throw new InvalidOptionError(
    'config.kinds',
    `the sharded kind ${type.apiVersion} ${type.kind} is neither in config.kinds nor a known built-in kind: its resource name is needed for the shard-label admission policy`,
  );
}

/**
 * The policy and its binding for the ring `ring` over `types`. CEL: every assignment label must be
 * the same before and after the write (an absent label and an empty one count the same) unless the
 * request comes from the operator's ServiceAccount. Creates are checked too: an object created with
 * the labels set (a restored backup) would otherwise be granted without a hand-over.
 */
export function shardLabelPolicyManifests(
  config: OperatorProjectConfig,
  ring: string,
  types: readonly ResourceType[],
): object[] {
  if (types.length === 0) return [];
  const byGroup = new Map<string, Set<string>>();
  for (const type of types) {
    const { group, resource } = resourceOf(type, config.kinds);
    byGroup.set(group, (byGroup.get(group) ?? new Set()).add(resource));
  }
  const resourceRules = [...byGroup]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({
      apiGroups: [group],
      apiVersions: ['*'],
      resources: [...resources].sort(),
      operations: ['CREATE', 'UPDATE'],
    }));
  const serviceAccount = `system:serviceaccount:${config.namespace}:${config.name}`;
  const label = (object: 'object' | 'oldObject') =>
    `(has(${object}.metadata.labels) && k in ${object}.metadata.labels ? ${object}.metadata.labels[k] : '')`;
  const name = shardLabelPolicyName(config);
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name, labels: { 'app.kubernetes.io/name': config.name } },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules },
        variables: [
          {
            name: 'assignmentLabels',
            expression: `[${assignmentLabels(ring)
              .map((l) => `'${l}'`)
              .join(', ')}]`,
          },
          { name: 'fromOperator', expression: `request.userInfo.username == '${serviceAccount}'` },
        ],
        validations: [
          {
            expression: `variables.fromOperator || variables.assignmentLabels.all(k, ${label('object')} == (request.operation == 'UPDATE' ? ${label('oldObject')} : ''))`,
            message: `only ${serviceAccount} may write the sharding labels of ring ${ring} (${assignmentLabels(ring).join(', ')}): they say which replica reconciles the object`,
            reason: 'Forbidden',
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name, labels: { 'app.kubernetes.io/name': config.name } },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}
