/**
 * The ClusterServiceVersion of an operator's registry+v1 bundle, built from the same pieces as its
 * Kustomize base: the Deployment of `deploymentManifest`, the rules of `operatorRbac`, the CRDs of
 * `customResourceDefinition` and the webhook rules of `webhookManifests`, so the two deliveries
 * cannot drift. Field meanings follow operator-framework/api's
 * pkg/operators/v1alpha1/clusterserviceversion_types.go.
 */
import type { DeploymentSpec } from 'kubernetes-types/apps/v1.js';
import type { PolicyRule } from 'kubernetes-types/rbac/v1.js';
import type { AnyCustomKind } from '../../crd/custom-kind.js';
import type { CustomResourceDefinition } from '../../crd/custom-resource-definition.js';
import type { JSONSchemaProps } from '../../crd/schema-props.js';
import type { Manager } from '../../manager/manager.js';
import type { RbacManifest } from '../../rbac/rbac-manifests.js';
import { CONVERSION_PATH } from '../../webhook/webhooks.js';
import type { WebhookConfiguration } from '../../webhook/webhook-manifests.js';
import type { OperatorProjectConfig } from '../config.js';
import { DEFAULT_WEBHOOK_PORT } from '../../webhook/webhook-server.js';
import { WEBHOOK_SERVICE_PORT } from '../webhook-serving-manifests.js';
import { DEFAULT_MIN_KUBE_VERSION } from './bundle-config.js';

export const CSV_API_VERSION = 'operators.coreos.com/v1alpha1';
export const INSTALL_MODE_TYPES = ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'] as const;
export type InstallModeType = (typeof INSTALL_MODE_TYPES)[number];

export interface InstallMode {
  type: InstallModeType;
  supported: boolean;
}

export interface Descriptor {
  path: string;
  displayName: string;
  description?: string;
  'x-descriptors'?: string[];
}

/** One entry of `spec.customresourcedefinitions.owned` (a CRDDescription). */
export interface OwnedCrd {
  name: string;
  version: string;
  kind: string;
  displayName: string;
  description?: string;
  specDescriptors?: Descriptor[];
  statusDescriptors?: Descriptor[];
}

/** One entry of `spec.webhookdefinitions` (a WebhookDescription). */
export interface WebhookDefinition {
  type: 'ValidatingAdmissionWebhook' | 'MutatingAdmissionWebhook' | 'ConversionWebhook';
  generateName: string;
  deploymentName: string;
  containerPort: number;
  targetPort: number;
  webhookPath: string;
  admissionReviewVersions: string[];
  sideEffects: string;
  rules?: unknown[];
  failurePolicy?: string;
  matchPolicy?: string;
  timeoutSeconds?: number;
  objectSelector?: unknown;
  reinvocationPolicy?: string;
  conversionCRDs?: string[];
}

export interface StrategyPermissions {
  serviceAccountName: string;
  rules: PolicyRule[];
}

export interface ClusterServiceVersion {
  apiVersion: typeof CSV_API_VERSION;
  kind: 'ClusterServiceVersion';
  metadata: { name: string; annotations: Record<string, string> };
  spec: {
    displayName: string;
    description: string;
    version: string;
    replaces?: string;
    minKubeVersion: string;
    keywords?: string[];
    maintainers?: { name: string; email: string }[];
    provider?: { name: string; url?: string };
    installModes: InstallMode[];
    install: {
      strategy: 'deployment';
      spec: {
        deployments: { name: string; label: Record<string, string>; spec: DeploymentSpec }[];
        clusterPermissions?: StrategyPermissions[];
        permissions?: StrategyPermissions[];
      };
    };
    customresourcedefinitions: { owned: OwnedCrd[] };
    webhookdefinitions?: WebhookDefinition[];
    relatedImages: { name: string; image: string }[];
  };
}

/** What the CSV is built from: all of it generated or validated by the caller. */
export interface ClusterServiceVersionInput {
  readonly config: OperatorProjectConfig;
  readonly manager: Manager;
  readonly packageName: string;
  readonly version: string;
  /** The Kustomize base's Deployment (`deploymentManifest`), taken as it is. */
  readonly deployment: { metadata: { name?: string; labels?: Record<string, string> }; spec: DeploymentSpec };
  /** The Kustomize base's RBAC (`operatorRbac`). */
  readonly rbac: readonly RbacManifest[];
  readonly crds: readonly { kind: AnyCustomKind; crd: CustomResourceDefinition }[];
  /** The Kustomize base's webhook configurations (`webhookManifests`); empty without webhooks. */
  readonly webhookConfigurations: readonly WebhookConfiguration[];
  readonly samples: readonly object[];
}

/** "database-operator" → "Database Operator"; "DatabaseFleet" → "Database Fleet". */
export function titleCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[-_\s]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join(' ');
}

/**
 * Install modes from the manager's namespaces. A cluster-wide manager (no `namespaces`) watches
 * every namespace, which is AllNamespaces and nothing else: OLM's OperatorGroup would otherwise
 * promise a narrower target the manager does not keep to. A namespaced manager serves exactly the
 * namespaces it names: OwnNamespace when that is only its own, SingleNamespace for one,
 * MultiNamespace for several. OLM v1 installs AllNamespaces bundles only (docs/delivery.md).
 */
export function installModes(config: OperatorProjectConfig, manager: Manager): InstallMode[] {
  const namespaces = manager.namespaces;
  const supported: Record<InstallModeType, boolean> = {
    OwnNamespace: namespaces?.length === 1 && namespaces[0] === config.namespace,
    SingleNamespace: namespaces?.length === 1,
    MultiNamespace: (namespaces?.length ?? 0) > 1,
    AllNamespaces: namespaces === undefined,
  };
  return INSTALL_MODE_TYPES.map((type) => ({ type, supported: supported[type] }));
}

/**
 * The ServiceAccount's rules as the CSV's install strategy carries them: the ClusterRole bound to
 * it as `clusterPermissions`, the Roles bound to it as `permissions` (OLM creates them in the
 * namespaces the OperatorGroup targets). An unbound ClusterRole (the metrics reader) is a manifest
 * of its own. Roles of several namespaces merge into one rule list, first seen first.
 */
export function strategyPermissions(
  serviceAccountName: string,
  rbac: readonly RbacManifest[],
): { clusterPermissions: StrategyPermissions[]; permissions: StrategyPermissions[] } {
  const boundRoles = (bindingKind: string, roleKind: string): PolicyRule[] => {
    const names = new Set(
      rbac.filter((o) => o.kind === bindingKind).map((o) => (o as { roleRef: { name: string } }).roleRef.name),
    );
    const rules: PolicyRule[] = [];
    const seen = new Set<string>();
    for (const role of rbac.filter((o) => o.kind === roleKind && names.has(o.metadata.name))) {
      for (const rule of (role as { rules?: PolicyRule[] }).rules ?? []) {
        const key = JSON.stringify(rule);
        if (seen.has(key)) continue;
        seen.add(key);
        rules.push(structuredClone(rule));
      }
    }
    return rules;
  };
  const cluster = boundRoles('ClusterRoleBinding', 'ClusterRole');
  const namespaced = boundRoles('RoleBinding', 'Role');
  return {
    clusterPermissions: cluster.length ? [{ serviceAccountName, rules: cluster }] : [],
    permissions: namespaced.length ? [{ serviceAccountName, rules: namespaced }] : [],
  };
}

/**
 * x-descriptors by schema type, from the OpenShift console's descriptor reference
 * (openshift/console, frontend/packages/operator-lifecycle-manager/src/components/descriptors/reference/reference.md).
 */
function specXDescriptors(schema: JSONSchemaProps): string[] | undefined {
  if (schema.enum?.length)
    return schema.enum.map((value) => `urn:alm:descriptor:com.tectonic.ui:select:${String(value)}`);
  switch (schema.type) {
    case 'boolean':
      return ['urn:alm:descriptor:com.tectonic.ui:booleanSwitch'];
    case 'integer':
    case 'number':
      return ['urn:alm:descriptor:com.tectonic.ui:number'];
    case 'string':
      return ['urn:alm:descriptor:com.tectonic.ui:text'];
    default:
      return undefined;
  }
}

function descriptor(path: string, schema: JSONSchemaProps, xDescriptors: string[] | undefined): Descriptor {
  return {
    path,
    displayName: titleCase(path),
    ...(schema.description ? { description: schema.description } : {}),
    ...(xDescriptors ? { 'x-descriptors': xDescriptors } : {}),
  };
}

/** Top-level spec and status fields of the storage version, with the console's widget for each. */
function descriptors(schema: JSONSchemaProps): Pick<OwnedCrd, 'specDescriptors' | 'statusDescriptors'> {
  const spec = Object.entries(schema.properties?.spec?.properties ?? {}).map(([path, s]) =>
    descriptor(path, s, specXDescriptors(s)),
  );
  const status = Object.entries(schema.properties?.status?.properties ?? {}).map(([path, s]) =>
    descriptor(path, s, path === 'conditions' ? ['urn:alm:descriptor:io.kubernetes.conditions'] : undefined),
  );
  return { ...(spec.length ? { specDescriptors: spec } : {}), ...(status.length ? { statusDescriptors: status } : {}) };
}

/** The storage version of each CRD, described: OLM and the console read the CRD under this name. */
export function ownedCrds(crds: ClusterServiceVersionInput['crds']): OwnedCrd[] {
  return crds.map(({ crd }) => {
    const storage = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0]!;
    const schema = storage.schema.openAPIV3Schema;
    return {
      name: crd.metadata.name,
      version: storage.name,
      kind: crd.spec.names.kind,
      displayName: titleCase(crd.spec.names.kind),
      ...(schema.description ? { description: schema.description } : {}),
      ...descriptors(schema),
    };
  });
}

/**
 * Webhook definitions from the Kustomize base's configurations (same rules, policies and paths) and
 * the registered conversions. OLM creates the Service `<deploymentName>-service` on
 * `containerPort`, the serving certificate, and the configurations with a namespaceSelector of its
 * own (operator-lifecycle-manager pkg/controller/install/webhook.go, certresources.go); it rewrites
 * each conversion CRD's `spec.conversion` to point at that Service.
 */
export function webhookDefinitions(input: ClusterServiceVersionInput): WebhookDefinition[] {
  const { config, manager } = input;
  const common = {
    deploymentName: config.name,
    containerPort: WEBHOOK_SERVICE_PORT,
    targetPort: config.deployment?.webhookPort ?? DEFAULT_WEBHOOK_PORT,
  };
  const admission = input.webhookConfigurations.flatMap((configuration) =>
    configuration.webhooks.map((w): WebhookDefinition => ({
      type:
        configuration.kind === 'MutatingWebhookConfiguration'
          ? 'MutatingAdmissionWebhook'
          : 'ValidatingAdmissionWebhook',
      generateName: w.name,
      ...common,
      webhookPath: w.clientConfig.service?.path ?? '/',
      admissionReviewVersions: [...w.admissionReviewVersions],
      sideEffects: w.sideEffects,
      rules: structuredClone(w.rules),
      ...(w.failurePolicy ? { failurePolicy: w.failurePolicy } : {}),
      ...(w.matchPolicy ? { matchPolicy: w.matchPolicy } : {}),
      ...(w.timeoutSeconds !== undefined ? { timeoutSeconds: w.timeoutSeconds } : {}),
      ...(w.objectSelector ? { objectSelector: structuredClone(w.objectSelector) } : {}),
      ...('reinvocationPolicy' in w && w.reinvocationPolicy ? { reinvocationPolicy: w.reinvocationPolicy } : {}),
    })),
  );
  const conversions = manager.webhooks.conversions().flatMap((c): WebhookDefinition[] => {
    const owned = input.crds.find(({ crd }) => crd.spec.group === c.group && crd.spec.names.kind === c.kind);
    if (!owned) return [];
    return [
      {
        type: 'ConversionWebhook',
        generateName: `c${owned.crd.metadata.name}`,
        ...common,
        webhookPath: CONVERSION_PATH,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        conversionCRDs: [owned.crd.metadata.name],
      },
    ];
  });
  return [...admission, ...conversions];
}

/** `alm-examples`: the samples as a JSON array, without namespaces (the console creates them where the user is). */
export function almExamples(samples: readonly object[]): string {
  const examples = samples.map((sample) => {
    const copy = structuredClone(sample) as { metadata?: Record<string, unknown> };
    if (copy.metadata) delete copy.metadata.namespace;
    return copy;
  });
  return JSON.stringify(examples, null, 2);
}

export function clusterServiceVersion(input: ClusterServiceVersionInput): ClusterServiceVersion {
  const { config, manager, version, packageName } = input;
  const bundle = config.bundle ?? {};
  const { clusterPermissions, permissions } = strategyPermissions(config.name, input.rbac);
  const webhooks = webhookDefinitions(input);
  const kindNames = input.crds.map(({ crd }) => crd.spec.names.kind);
  return {
    apiVersion: CSV_API_VERSION,
    kind: 'ClusterServiceVersion',
    metadata: {
      name: `${packageName}.v${version}`,
      annotations: {
        'alm-examples': almExamples(input.samples),
        capabilities: 'Basic Install',
        containerImage: config.image,
        'operatorframework.io/suggested-namespace': config.namespace,
      },
    },
    spec: {
      displayName: bundle.displayName ?? titleCase(config.name),
      description:
        bundle.description ??
        `${titleCase(config.name)} manages ${kindNames.join(', ') || 'its resources'} (built on operator-runtime).`,
      version,
      ...(bundle.replaces ? { replaces: bundle.replaces } : {}),
      minKubeVersion: bundle.minKubeVersion ?? DEFAULT_MIN_KUBE_VERSION,
      ...(bundle.keywords?.length ? { keywords: [...bundle.keywords] } : {}),
      ...(bundle.maintainers?.length ? { maintainers: bundle.maintainers.map((m) => ({ ...m })) } : {}),
      ...(bundle.provider ? { provider: { ...bundle.provider } } : {}),
      installModes: installModes(config, manager),
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [
            {
              name: input.deployment.metadata.name ?? config.name,
              label: { ...input.deployment.metadata.labels },
              spec: structuredClone(input.deployment.spec),
            },
          ],
          ...(clusterPermissions.length ? { clusterPermissions } : {}),
          ...(permissions.length ? { permissions } : {}),
        },
      },
      customresourcedefinitions: { owned: ownedCrds(input.crds) },
      ...(webhooks.length ? { webhookdefinitions: webhooks } : {}),
      relatedImages: [{ name: config.name, image: config.image }],
    },
  };
}
