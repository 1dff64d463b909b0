/**
 * Kubernetes API versions that a release stopped serving, and the check that refuses a manifest
 * using one for a target Kubernetes version (`--kubernetes-version` on `generate` and `validate`).
 *
 * Source: the Kubernetes "Deprecated API Migration Guide"
 * (https://kubernetes.io/docs/reference/using-api/deprecation-guide/), section "Removed APIs by
 * release", v1.16 to v1.32 (the last release that removed an API version at the time of writing).
 * `replacementSince` is the guide's "available since"; from that release on the old version is
 * deprecated (its replacement is served), so a target at or past it and before the removal warns.
 * operator-framework/api's AlphaDeprecatedAPIsValidator (pkg/validation/internal/removed_apis.go)
 * does the same for 1.22, 1.25 and 1.26 only.
 */

/** One API version of one kind that a Kubernetes release no longer serves. */
export interface RemovedApi {
  readonly apiVersion: string;
  readonly kind: string;
  /** The minor release (1.x) that stopped serving it. */
  readonly removedIn: string;
  /** What to use instead (apiVersion, or a sentence when there is no like-for-like replacement). */
  readonly replacement: string;
  /** The release that first served the replacement; the old version is deprecated from then on. */
  readonly replacementSince?: string;
}

/** APIs that are deprecated but have no removal scheduled; a target at or past `deprecatedIn` warns. */
export interface DeprecatedApi {
  readonly apiVersion: string;
  readonly kind: string;
  readonly deprecatedIn: string;
  readonly replacement: string;
}

const removed = (
  removedIn: string,
  apiVersions: readonly string[],
  kinds: readonly string[],
  replacement: string,
  replacementSince?: string,
): RemovedApi[] =>
  apiVersions.flatMap((apiVersion) =>
    kinds.map((kind) => ({
      apiVersion,
      kind,
      removedIn,
      replacement,
      ...(replacementSince ? { replacementSince } : {}),
    })),
  );

/** The guide's "Removed APIs by release", one row per (apiVersion, kind). */
export const REMOVED_APIS: readonly RemovedApi[] = [
  // v1.16
  ...removed('1.16', ['extensions/v1beta1'], ['NetworkPolicy'], 'networking.k8s.io/v1', '1.8'),
  ...removed('1.16', ['extensions/v1beta1'], ['PodSecurityPolicy'], 'policy/v1beta1', '1.10'),
  ...removed(
    '1.16',
    ['extensions/v1beta1', 'apps/v1beta2'],
    ['DaemonSet', 'Deployment', 'ReplicaSet'],
    'apps/v1',
    '1.9',
  ),
  ...removed('1.16', ['apps/v1beta1'], ['Deployment', 'ReplicaSet', 'StatefulSet'], 'apps/v1', '1.9'),
  ...removed('1.16', ['apps/v1beta2'], ['StatefulSet'], 'apps/v1', '1.9'),
  // v1.22
  ...removed(
    '1.22',
    ['admissionregistration.k8s.io/v1beta1'],
    ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
    'admissionregistration.k8s.io/v1',
    '1.16',
  ),
  ...removed('1.22', ['apiextensions.k8s.io/v1beta1'], ['CustomResourceDefinition'], 'apiextensions.k8s.io/v1', '1.16'),
  ...removed('1.22', ['apiregistration.k8s.io/v1beta1'], ['APIService'], 'apiregistration.k8s.io/v1', '1.10'),
  ...removed('1.22', ['authentication.k8s.io/v1beta1'], ['TokenReview'], 'authentication.k8s.io/v1', '1.6'),
  ...removed(
    '1.22',
    ['authorization.k8s.io/v1beta1'],
    ['LocalSubjectAccessReview', 'SelfSubjectAccessReview', 'SubjectAccessReview'],
    'authorization.k8s.io/v1',
    '1.6',
  ),
  ...removed('1.22', ['certificates.k8s.io/v1beta1'], ['CertificateSigningRequest'], 'certificates.k8s.io/v1', '1.19'),
  ...removed('1.22', ['coordination.k8s.io/v1beta1'], ['Lease'], 'coordination.k8s.io/v1', '1.14'),
  ...removed('1.22', ['extensions/v1beta1', 'networking.k8s.io/v1beta1'], ['Ingress'], 'networking.k8s.io/v1', '1.19'),
  ...removed('1.22', ['networking.k8s.io/v1beta1'], ['IngressClass'], 'networking.k8s.io/v1', '1.19'),
  ...removed(
    '1.22',
    ['rbac.authorization.k8s.io/v1beta1'],
    ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'],
    'rbac.authorization.k8s.io/v1',
    '1.8',
  ),
  ...removed('1.22', ['scheduling.k8s.io/v1beta1'], ['PriorityClass'], 'scheduling.k8s.io/v1', '1.14'),
  ...removed('1.22', ['storage.k8s.io/v1beta1'], ['CSIDriver'], 'storage.k8s.io/v1', '1.19'),
  ...removed('1.22', ['storage.k8s.io/v1beta1'], ['CSINode'], 'storage.k8s.io/v1', '1.17'),
  ...removed('1.22', ['storage.k8s.io/v1beta1'], ['StorageClass'], 'storage.k8s.io/v1', '1.6'),
  ...removed('1.22', ['storage.k8s.io/v1beta1'], ['VolumeAttachment'], 'storage.k8s.io/v1', '1.13'),
  // v1.25
  ...removed('1.25', ['batch/v1beta1'], ['CronJob'], 'batch/v1', '1.21'),
  ...removed('1.25', ['discovery.k8s.io/v1beta1'], ['EndpointSlice'], 'discovery.k8s.io/v1', '1.21'),
  ...removed('1.25', ['events.k8s.io/v1beta1'], ['Event'], 'events.k8s.io/v1', '1.19'),
  ...removed('1.25', ['autoscaling/v2beta1'], ['HorizontalPodAutoscaler'], 'autoscaling/v2', '1.23'),
  ...removed('1.25', ['policy/v1beta1'], ['PodDisruptionBudget'], 'policy/v1', '1.21'),
  ...removed(
    '1.25',
    ['policy/v1beta1'],
    ['PodSecurityPolicy'],
    'no replacement: Pod Security Admission (namespace labels) or a third-party admission webhook',
  ),
  ...removed('1.25', ['node.k8s.io/v1beta1'], ['RuntimeClass'], 'node.k8s.io/v1', '1.20'),
  // v1.26
  ...removed(
    '1.26',
    ['flowcontrol.apiserver.k8s.io/v1beta1'],
    ['FlowSchema', 'PriorityLevelConfiguration'],
    'flowcontrol.apiserver.k8s.io/v1beta3 (served since 1.26) or flowcontrol.apiserver.k8s.io/v1 (since 1.29)',
    '1.26',
  ),
  ...removed('1.26', ['autoscaling/v2beta2'], ['HorizontalPodAutoscaler'], 'autoscaling/v2', '1.23'),
  // v1.27
  ...removed('1.27', ['storage.k8s.io/v1beta1'], ['CSIStorageCapacity'], 'storage.k8s.io/v1', '1.24'),
  // v1.29
  ...removed(
    '1.29',
    ['flowcontrol.apiserver.k8s.io/v1beta2'],
    ['FlowSchema', 'PriorityLevelConfiguration'],
    'flowcontrol.apiserver.k8s.io/v1 (served since 1.29) or flowcontrol.apiserver.k8s.io/v1beta3 (since 1.26)',
    '1.26',
  ),
  // v1.32
  ...removed(
    '1.32',
    ['flowcontrol.apiserver.k8s.io/v1beta3'],
    ['FlowSchema', 'PriorityLevelConfiguration'],
    'flowcontrol.apiserver.k8s.io/v1',
    '1.29',
  ),
];

/**
 * Deprecated with no removal scheduled. Source: the Kubernetes v1.33 release notes (KEP-4974,
 * "Deprecate v1.Endpoints"): the API server warns on every Endpoints request from 1.33.
 */
export const DEPRECATED_APIS: readonly DeprecatedApi[] = [
  { apiVersion: 'v1', kind: 'Endpoints', deprecatedIn: '1.33', replacement: 'discovery.k8s.io/v1 EndpointSlice' },
];

/** A Kubernetes release as major and minor (the patch level never removes an API). */
export interface KubernetesVersion {
  readonly major: number;
  readonly minor: number;
}

/** Parses `1.30`, `v1.30`, `1.30.2` or `v1.30.0-rc.1`; undefined for anything else. */
export function parseKubernetesVersion(text: string): KubernetesVersion | undefined {
  const match = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.-]+)?$/.exec(text.trim());
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]) };
}

const atOrAfter = (target: KubernetesVersion, release: string): boolean => {
  const r = parseKubernetesVersion(release)!;
  return target.major > r.major || (target.major === r.major && target.minor >= r.minor);
};

export const formatKubernetesVersion = (v: KubernetesVersion): string => `${v.major}.${v.minor}`;

/** One finding: an object whose apiVersion/kind is removed (error) or deprecated (warning) at the target. */
export interface ApiVersionFinding {
  readonly severity: 'error' | 'warning';
  readonly apiVersion: string;
  readonly kind: string;
  readonly message: string;
}

/** What the check reads of an object: its type, and its name for the message. */
export interface TypedObject {
  readonly apiVersion?: unknown;
  readonly kind?: unknown;
  readonly metadata?: { readonly name?: unknown };
}

/**
 * The finding for one object at `target`, or undefined when its API is served and not deprecated.
 * Removed at or before the target: an error naming the replacement; deprecated at the target
 * (replacement served, removal still ahead): a warning naming both.
 */
export function checkApiVersion(object: TypedObject, target: KubernetesVersion): ApiVersionFinding | undefined {
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  const name = typeof object.metadata?.name === 'string' ? ` ${object.metadata.name}` : '';
  const what = `${apiVersion} ${kind}${name}`;
  const version = formatKubernetesVersion(target);
  const entry = REMOVED_APIS.find((r) => r.apiVersion === apiVersion && r.kind === kind);
  if (entry) {
    if (atOrAfter(target, entry.removedIn))
      return {
        severity: 'error',
        apiVersion,
        kind,
        message: `${what}: ${apiVersion} ${kind} is not served by Kubernetes ${version} (removed in ${entry.removedIn}); use ${entry.replacement}`,
      };
    if (entry.replacementSince === undefined || atOrAfter(target, entry.replacementSince))
      return {
        severity: 'warning',
        apiVersion,
        kind,
        message: `${what}: ${apiVersion} ${kind} is deprecated and removed in Kubernetes ${entry.removedIn}; use ${entry.replacement}`,
      };
    return undefined;
  }
  const deprecated = DEPRECATED_APIS.find((d) => d.apiVersion === apiVersion && d.kind === kind);
  if (deprecated && atOrAfter(target, deprecated.deprecatedIn))
    return {
      severity: 'warning',
      apiVersion,
      kind,
      message: `${what}: ${apiVersion} ${kind} is deprecated since Kubernetes ${deprecated.deprecatedIn}; use ${deprecated.replacement}`,
    };
  return undefined;
}
