/**
 * The kinds a fake client serves, standing in for discovery: which plural a kind has, whether it is
 * namespaced, whether it has a `/status` subresource, whether it tracks `metadata.generation`, and
 * whether it is a built-in (updates without resourceVersion allowed, strategic merge accepted) or a
 * custom resource (neither). Custom kinds come from `registerKind` or from CRD manifests.
 */
import { InvalidOptionError } from '../../core/errors.js';
import { parseApiVersion } from '../../core/object-key.js';
import type { ResourceType } from '../../client/discovery.js';
import { NoKindMatchError } from '../../client/discovery.js';
import type { SchemaProps } from './schema-validation.js';

export interface KindInfo {
  readonly apiVersion: string;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Plural resource name, e.g. `widgets`. */
  readonly plural: string;
  readonly namespaced: boolean;
  readonly statusSubresource: boolean;
  /** Built-in kinds take unconditional updates and strategic merge patches; custom resources do not. */
  readonly builtIn: boolean;
  /** Whether the server maintains `metadata.generation` (all custom resources; some built-ins). */
  readonly generation: boolean;
  /** OpenAPI v3 schema (custom resources): validated and used to prune unknown fields. */
  readonly schema?: SchemaProps;
}

/** What a test gives to register a custom kind. */
export interface KindRegistration {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  /** @defaultValue true */
  readonly namespaced?: boolean;
  /** @defaultValue false */
  readonly statusSubresource?: boolean;
  readonly schema?: SchemaProps;
}

type BuiltIn = [
  apiVersion: string,
  kind: string,
  plural: string,
  namespaced: boolean,
  status: boolean,
  generation: boolean,
];

/** The built-in kinds operators touch most: core, apps, batch, coordination, rbac, apiextensions. */
const BUILT_INS: readonly BuiltIn[] = [
  ['v1', 'Namespace', 'namespaces', false, true, false],
  ['v1', 'ConfigMap', 'configmaps', true, false, false],
  ['v1', 'Secret', 'secrets', true, false, false],
  ['v1', 'Service', 'services', true, true, false],
  ['v1', 'ServiceAccount', 'serviceaccounts', true, false, false],
  ['v1', 'Pod', 'pods', true, true, false],
  ['v1', 'Endpoints', 'endpoints', true, false, false],
  ['v1', 'Event', 'events', true, false, false],
  ['v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true, true, false],
  ['v1', 'PersistentVolume', 'persistentvolumes', false, true, false],
  ['v1', 'Node', 'nodes', false, true, false],
  ['apps/v1', 'Deployment', 'deployments', true, true, true],
  ['apps/v1', 'StatefulSet', 'statefulsets', true, true, true],
  ['apps/v1', 'DaemonSet', 'daemonsets', true, true, true],
  ['apps/v1', 'ReplicaSet', 'replicasets', true, true, true],
  ['batch/v1', 'Job', 'jobs', true, true, false],
  ['coordination.k8s.io/v1', 'Lease', 'leases', true, false, false],
  ['rbac.authorization.k8s.io/v1', 'Role', 'roles', true, false, false],
  ['rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings', true, false, false],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false, false, false],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings', false, false, false],
  ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, true, true],
];

export class KindRegistry {
  private readonly byKind = new Map<string, KindInfo>();

  constructor() {
    for (const [apiVersion, kind, plural, namespaced, status, generation] of BUILT_INS) {
      this.add({
        ...parseApiVersion(apiVersion),
        apiVersion,
        kind,
        plural,
        namespaced,
        statusSubresource: status,
        builtIn: true,
        generation,
      });
    }
  }

  /** Registers (or replaces) a custom kind. */
  register(reg: KindRegistration): KindInfo {
    if (!reg.apiVersion || !reg.kind || !reg.plural)
      throw new InvalidOptionError('kind', 'apiVersion, kind and plural are required');
    const info: KindInfo = {
      ...parseApiVersion(reg.apiVersion),
      apiVersion: reg.apiVersion,
      kind: reg.kind,
      plural: reg.plural,
      namespaced: reg.namespaced ?? true,
      statusSubresource: reg.statusSubresource ?? false,
      builtIn: false,
      generation: true,
      schema: reg.schema,
    };
    this.add(info);
    return info;
  }

  /** Registers every served version of an apiextensions.k8s.io/v1 CustomResourceDefinition. */
  registerCrd(manifest: object): KindInfo[] {
    const crd = manifest as CrdLike;
    if (
      crd.kind !== 'CustomResourceDefinition' ||
      !crd.spec?.group ||
      !crd.spec.names?.kind ||
      !crd.spec.names.plural
    ) {
      throw new InvalidOptionError('crd', 'not a CustomResourceDefinition with spec.group and spec.names');
    }
    const { group, names, scope } = crd.spec;
    return (crd.spec.versions ?? [])
      .filter((v) => v.served !== false)
      .map((v) =>
        this.register({
          apiVersion: `${group}/${v.name}`,
          kind: names.kind!,
          plural: names.plural!,
          namespaced: scope !== 'Cluster',
          statusSubresource: v.subresources?.status !== undefined,
          schema: v.schema?.openAPIV3Schema,
        }),
      );
  }

  all(): KindInfo[] {
    return [...this.byKind.values()];
  }

  lookup(type: ResourceType): KindInfo | undefined {
    return this.byKind.get(key(type.apiVersion, type.kind));
  }

  /** Like the real RestMapper: an unknown kind is a NoKindMatchError. */
  require(type: ResourceType): KindInfo {
    const info = this.lookup(type);
    if (!info)
      throw new NoKindMatchError(
        type.apiVersion,
        type.kind,
        'the fake client has no such kind registered (registerKind / registerCrd)',
      );
    return info;
  }

  private add(info: KindInfo): void {
    this.byKind.set(key(info.apiVersion, info.kind), info);
  }
}

interface CrdLike {
  kind?: string;
  spec?: {
    group?: string;
    scope?: string;
    names?: { kind?: string; plural?: string };
    versions?: {
      name: string;
      served?: boolean;
      subresources?: { status?: object };
      schema?: { openAPIV3Schema?: SchemaProps };
    }[];
  };
}

function key(apiVersion: string, kind: string): string {
  return `${apiVersion}\u0000${kind}`;
}
