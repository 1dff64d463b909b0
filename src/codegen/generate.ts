/**
 * `generate crds|rbac|manifests` as functions: a project config in, file contents out (paths
 * relative to the output folder). Nothing touches the disk or an API server here, so every file is
 * built before the CLI writes any of them.
 */
import type { AnyCustomKind } from '../crd/custom-kind.js';
import { KIND_CONVENTION_CHECKS } from '../crd/kind-conventions.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Manager } from '../manager/manager.js';
import type { OperatorProjectConfig } from './config.js';
import {
  CERT_MANAGER_INJECT_CA_ANNOTATION,
  customResourceDefinition,
  manifestYaml,
  rbacManifests,
  webhookConversion,
  webhookManifests,
} from './generators.js';
import {
  ARGOCD_HEALTH_CHECKS_FILE,
  FLUX_HEALTH_CHECKS_FILE,
  argoCdHealthConfigMap,
  fluxHealthChecks,
} from './health-checks.js';
import { operatorManifests, operatorManifestsComment, type OperatorFeatures } from './operator-manifests.js';
import type { RbacManifest } from '../rbac/rbac-manifests.js';
import { shardLabelPolicyManifests } from './shard-label-policy.js';
import {
  servingCertificateManifests,
  webhookClientOptions,
  webhookNetworkPolicyManifest,
  webhookServiceManifest,
} from './webhook-serving-manifests.js';

/** One generated file: `path` is relative to the output folder. */
export interface GeneratedFile {
  readonly path: string;
  readonly content: string;
}

export const CRD_FILE = 'crd.yaml';
export const RBAC_FILE = 'rbac.yaml';
export const DEPLOYMENT_FILE = 'deployment.yaml';
export const KUSTOMIZATION_FILE = 'kustomization.yaml';
export const WEBHOOKS_FILE = 'webhooks.yaml';
export const SHARDING_FILE = 'sharding.yaml';
/** Every generated file names the one command that rewrites them all, whichever wrote it. */
export const REGENERATE_COMMAND = 'npx operator-runtime generate manifests';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

const isCustomKind = (kind: unknown): kind is AnyCustomKind =>
  typeof kind === 'object' &&
  kind !== null &&
  ['apiVersion', 'kind', 'group', 'plural', 'scope'].every(
    (key) => typeof (kind as Record<string, unknown>)[key] === 'string',
  );

/** Checks the config's fields a user writes by hand; names the first wrong one. */
export function validateProjectConfig(config: OperatorProjectConfig): void {
  const field = (name: string, ok: boolean, why: string) => {
    if (!ok) throw new InvalidOptionError(`config.${name}`, why);
  };
  field(
    'name',
    typeof config.name === 'string' && DNS_LABEL.test(config.name),
    `must be a DNS label (lowercase letters, digits and '-', at most 63), got ${JSON.stringify(config.name)}`,
  );
  field(
    'namespace',
    typeof config.namespace === 'string' && DNS_LABEL.test(config.namespace),
    `must be a DNS label, got ${JSON.stringify(config.namespace)}`,
  );
  const lastPart = typeof config.image === 'string' ? (config.image.split('/').pop() ?? '') : '';
  field(
    'image',
    /^\S+$/.test(String(config.image)) && /^[^:@]+(:\w[\w.-]*|@sha256:[0-9a-f]{64})$/.test(lastPart),
    `must name a tag or digest (e.g. example.com/op:0.1.0), got ${JSON.stringify(config.image)}`,
  );
  field(
    'image',
    !config.image.endsWith(':latest'),
    'must not use :latest (a Deployment must say which version it runs)',
  );
  field('kinds', Array.isArray(config.kinds), 'must be an array of custom kinds (defineCustomKind)');
  config.kinds.forEach((kind, i) =>
    field(`kinds[${i}]`, isCustomKind(kind), 'is not a custom kind (defineCustomKind from operator-runtime/crd)'),
  );
  field('manager', typeof config.manager === 'function', 'must be a function that builds the Manager');
  field(
    'regenerate',
    config.regenerate === undefined || (typeof config.regenerate === 'string' && !config.regenerate.includes('\n')),
    'must be one line',
  );
  field(
    'outDir',
    config.outDir === undefined || (typeof config.outDir === 'string' && config.outDir.length > 0),
    'must be a non-empty path',
  );
  (config.lint?.allow ?? []).forEach((a, i) =>
    field(
      `lint.allow[${i}]`,
      (KIND_CONVENTION_CHECKS as readonly string[]).includes(a.check) &&
        typeof a.path === 'string' &&
        typeof a.reason === 'string' &&
        a.reason.trim().length > 0,
      `needs a check (one of ${KIND_CONVENTION_CHECKS.join(', ')}), a path and a reason, got ${JSON.stringify(a)}`,
    ),
  );
}

/** Calls the config's `manager()` and checks it returned a Manager (every generator reads the same one). */
export async function buildManager(config: OperatorProjectConfig): Promise<Manager> {
  const manager: unknown = await config.manager();
  if (
    typeof manager !== 'object' ||
    manager === null ||
    typeof (manager as { permissions?: unknown }).permissions !== 'function'
  ) {
    throw new InvalidOptionError(
      'config.manager',
      'must return a Manager (new Manager({ … }) with its controllers registered)',
    );
  }
  return manager as Manager;
}

export const featuresOf = (manager: Manager): OperatorFeatures => ({ webhooks: manager.webhooks.size > 0 });

function yaml(config: OperatorProjectConfig, objects: readonly object[], comment?: readonly string[]): string {
  return manifestYaml(objects, {
    regenerate: config.regenerate ?? REGENERATE_COMMAND,
    ...(comment?.length ? { comment } : {}),
  });
}

/** A kind's CRD; with a conversion webhook registered for it, its `conversion` stanza and cert-manager's CA annotation. */
function crdOf(config: OperatorProjectConfig, manager: Manager, kind: AnyCustomKind): object {
  const conversion = webhookConversion(manager, kind, webhookClientOptions(config));
  if (!conversion) return customResourceDefinition(kind);
  const crd = customResourceDefinition(kind, { conversion });
  const annotations = {
    ...crd.metadata.annotations,
    [CERT_MANAGER_INJECT_CA_ANNOTATION]: webhookClientOptions(config).certManagerCertificate,
  };
  return { ...crd, metadata: { ...crd.metadata, annotations } };
}

function crdFiles(config: OperatorProjectConfig, manager: Manager): GeneratedFile[] {
  if (config.kinds.length === 0) return [];
  // By resource name, so reordering `kinds` in the config changes nothing.
  const kinds = [...config.kinds].sort((a, b) => `${a.plural}.${a.group}`.localeCompare(`${b.plural}.${b.group}`));
  return [
    {
      path: CRD_FILE,
      content: yaml(
        config,
        kinds.map((kind) => crdOf(config, manager, kind)),
        config.comments?.crds,
      ),
    },
  ];
}

/** rbac.yaml's objects: the roles the manager declares, bound to the operator's ServiceAccount. */
export function operatorRbac(config: OperatorProjectConfig, manager: Manager): RbacManifest[] {
  return rbacManifests(manager, {
    name: config.name,
    serviceAccount: { name: config.name, namespace: config.namespace },
  });
}

function rbacFile(config: OperatorProjectConfig, manager: Manager): GeneratedFile {
  return { path: RBAC_FILE, content: yaml(config, operatorRbac(config, manager), config.comments?.rbac) };
}

/**
 * The kinds' GitOps health checks (health-checks.ts), outside the Kustomize base: one file for
 * Flux, one for Argo CD, both from the kstatus rules. None without kinds.
 */
function healthCheckFiles(config: OperatorProjectConfig): GeneratedFile[] {
  if (config.kinds.length === 0) return [];
  const kinds = [...config.kinds].sort((a, b) => `${a.plural}.${a.group}`.localeCompare(`${b.plural}.${b.group}`));
  return [
    {
      path: FLUX_HEALTH_CHECKS_FILE,
      content: yaml(
        config,
        [fluxHealthChecks(kinds)],
        [
          'Flux health checks (kstatus rules, docs/status.md): merge into the spec of the Flux Kustomization',
          "that applies these kinds' objects (with wait: true or healthChecks naming them).",
        ],
      ),
    },
    {
      path: ARGOCD_HEALTH_CHECKS_FILE,
      content: yaml(
        config,
        [argoCdHealthConfigMap(kinds)],
        [
          'Argo CD health checks (kstatus rules, docs/status.md), one Lua script per kind: merge into argocd-cm,',
          'e.g. kubectl -n argocd patch configmap argocd-cm --type merge --patch-file health/argocd-cm.yaml',
        ],
      ),
    },
  ];
}

/** crd.yaml: one CRD per kind (none without kinds). */
export async function generateCrds(config: OperatorProjectConfig): Promise<GeneratedFile[]> {
  validateProjectConfig(config);
  if (config.kinds.length === 0) return [];
  return crdFiles(config, await buildManager(config));
}

/** rbac.yaml: the roles and bindings the manager's declarations need. */
export async function generateRbac(config: OperatorProjectConfig): Promise<GeneratedFile[]> {
  validateProjectConfig(config);
  return [rbacFile(config, await buildManager(config))];
}

/**
 * The whole Kustomize base: CRDs, RBAC, the operator's Namespace/ServiceAccount/Deployment/metrics
 * Service/NetworkPolicy, and when the manager has webhooks their configurations, Service and
 * cert-manager serving certificate, and with sharding the admission policy guarding the shard labels;
 * kustomization.yaml lists them. Beside it, health/ holds each kind's Flux and Argo CD health checks.
 */
export async function generateManifests(config: OperatorProjectConfig): Promise<GeneratedFile[]> {
  validateProjectConfig(config);
  const manager = await buildManager(config);
  const features = featuresOf(manager);
  const files = [...crdFiles(config, manager), rbacFile(config, manager)];
  files.push({
    path: DEPLOYMENT_FILE,
    content: yaml(
      config,
      operatorManifests(config, features),
      config.comments?.deployment ?? operatorManifestsComment(config, features),
    ),
  });
  if (features.webhooks) {
    const configurations = webhookManifests(manager, { name: config.name, ...webhookClientOptions(config) });
    const comment = config.comments?.webhooks ?? [
      "The webhooks' configurations, their Service, a NetworkPolicy admitting only deployment.webhookIngressFrom",
      '(default: private addresses) to the webhook port, and a serving certificate from cert-manager (which must',
      'be installed): its CA injector fills every caBundle from the Certificate named in the annotations.',
    ];
    files.push({
      path: WEBHOOKS_FILE,
      content: yaml(
        config,
        [
          ...configurations,
          webhookServiceManifest(config),
          webhookNetworkPolicyManifest(config),
          ...servingCertificateManifests(config),
        ],
        comment,
      ),
    });
  }
  const sharding = manager.sharding;
  if (sharding && sharding.kinds().length > 0) {
    const comment = config.comments?.sharding ?? [
      `Sharding (ring ${sharding.ring}): a ValidatingAdmissionPolicy that lets only the operator's ServiceAccount`,
      'write the assignment labels of the sharded kinds (admissionregistration.k8s.io/v1: Kubernetes 1.30 or later).',
    ];
    files.push({
      path: SHARDING_FILE,
      content: yaml(config, shardLabelPolicyManifests(config, sharding.ring, sharding.kinds()), comment),
    });
  }
  const resources = files.map((f) => f.path);
  files.push(...healthCheckFiles(config));
  files.push({
    path: KUSTOMIZATION_FILE,
    content: yaml(config, [{ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources }]),
  });
  return files;
}
