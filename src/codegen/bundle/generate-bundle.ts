/**
 * `generate bundle` as a function: a project config (and its samples) in, the files of an OLM
 * registry+v1 bundle out — `manifests/` with one object per file (operator-framework/api's
 * pkg/manifests/bundleloader.go reads only the first document of each), `metadata/annotations.yaml`
 * and a `bundle.Dockerfile` whose labels repeat the annotations (operator-registry
 * pkg/lib/bundle/generate.go). Nothing touches the disk here.
 */
import { customResourceDefinition } from '../../crd/custom-resource-definition.js';
import { manifestYaml } from '../../crd/manifest-yaml.js';
import { InvalidOptionError } from '../../core/errors.js';
import { webhookManifests } from '../../webhook/webhook-manifests.js';
import type { OperatorProjectConfig } from '../config.js';
import { buildManager, featuresOf, operatorRbac, validateProjectConfig, type GeneratedFile } from '../generate.js';
import { deploymentManifest, metricsServiceManifest, networkPolicyManifest } from '../operator-manifests.js';
import { webhookClientOptions, webhookNetworkPolicyManifest } from '../webhook-serving-manifests.js';
import { DEFAULT_BUNDLE_CHANNELS } from './bundle-config.js';
import { BUNDLE_ANNOTATIONS, MANIFESTS_DIR, METADATA_DIR, REGISTRY_V1_MEDIA_TYPE } from './bundle-format.js';
import { clusterServiceVersion } from './cluster-service-version.js';
import { isSemver } from './semver.js';

export const BUNDLE_REGENERATE_COMMAND = 'npx operator-runtime generate bundle';
export const ANNOTATIONS_FILE = `${METADATA_DIR}annotations.yaml`;
export const BUNDLE_DOCKERFILE = 'bundle.Dockerfile';

export interface GenerateBundleOptions {
  /** The operator's version (semver); wins over `bundle.version` in the config. */
  readonly version?: string;
  /** The sample objects (the CSV's `alm-examples`), each of a kind the operator owns. */
  readonly samples?: readonly object[];
}

export interface GeneratedBundle {
  /** Paths relative to the bundle folder. */
  readonly files: GeneratedFile[];
  /** What the bundle leaves out and why, for the CLI to print. */
  readonly notes: string[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

/** operator-sdk's file name for a bundle object: `<name>_<group>_<version>_<kind>.yaml`, lower-case. */
function manifestFileName(object: Manifest): string {
  const gv = object.apiVersion.replace('/', '_');
  return `${MANIFESTS_DIR}${object.metadata.name}_${gv}_${object.kind.toLowerCase()}.yaml`;
}

/** OLM places namespaced bundle objects in the namespace it installs into. */
function withoutNamespace<T extends Manifest>(object: T): T {
  const copy = structuredClone(object);
  delete copy.metadata.namespace;
  return copy;
}

function checkBundleOptions(config: OperatorProjectConfig, version: string | undefined) {
  const bundle = config.bundle ?? {};
  const packageName = bundle.package ?? config.name;
  if (!DNS_LABEL.test(packageName))
    throw new InvalidOptionError('config.bundle.package', `must be a DNS label, got ${JSON.stringify(packageName)}`);
  if (!isSemver(version))
    throw new InvalidOptionError(
      'config.bundle.version',
      `must be a semantic version such as 0.1.0 (set bundle.version, pass --version, or keep a version in package.json), got ${JSON.stringify(version)}`,
    );
  const channels = bundle.channels ?? DEFAULT_BUNDLE_CHANNELS;
  if (channels.length === 0 || channels.some((c) => typeof c !== 'string' || !/^[A-Za-z0-9][-A-Za-z0-9_.]*$/.test(c)))
    throw new InvalidOptionError(
      'config.bundle.channels',
      `must name at least one channel, got ${JSON.stringify(channels)}`,
    );
  const defaultChannel = bundle.defaultChannel ?? channels[0]!;
  if (!channels.includes(defaultChannel))
    throw new InvalidOptionError(
      'config.bundle.defaultChannel',
      `${JSON.stringify(defaultChannel)} is not one of the channels ${JSON.stringify(channels)}`,
    );
  return { packageName, version, channels, defaultChannel };
}

/** The samples must be objects of an owned kind at its storage version: the CSV validator requires it (csv.go). */
function checkSamples(samples: readonly object[], owned: readonly { apiVersion: string; kind: string }[]): void {
  samples.forEach((sample, i) => {
    const { apiVersion, kind } = sample as { apiVersion?: unknown; kind?: unknown };
    if (!owned.some((o) => o.apiVersion === apiVersion && o.kind === kind))
      throw new InvalidOptionError(
        `config.bundle.samples[${i}]`,
        `${String(apiVersion)} ${String(kind)} is not a kind the operator owns at its storage version (${owned.map((o) => `${o.apiVersion} ${o.kind}`).join(', ')})`,
      );
  });
}

export async function generateBundle(
  config: OperatorProjectConfig,
  options: GenerateBundleOptions = {},
): Promise<GeneratedBundle> {
  validateProjectConfig(config);
  const { packageName, version, channels, defaultChannel } = checkBundleOptions(
    config,
    options.version ?? config.bundle?.version,
  );
  const manager = await buildManager(config);
  const features = featuresOf(manager);
  const kinds = [...config.kinds].sort((a, b) => `${a.plural}.${a.group}`.localeCompare(`${b.plural}.${b.group}`));
  // The plain CRD: OLM writes the conversion stanza of a ConversionWebhook's CRDs itself, and
  // cert-manager's CA annotation has no injector under OLM.
  const crds = kinds.map((kind) => ({ kind, crd: customResourceDefinition(kind) }));
  const samples = options.samples ?? [];
  checkSamples(
    samples,
    crds.map(({ crd }) => ({
      apiVersion: `${crd.spec.group}/${(crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0]!).name}`,
      kind: crd.spec.names.kind,
    })),
  );
  const rbac = operatorRbac(config, manager);
  const deployment = deploymentManifest(config, features);
  const webhookConfigurations = features.webhooks
    ? webhookManifests(manager, { name: config.name, ...webhookClientOptions(config) })
    : [];
  const csv = clusterServiceVersion({
    config,
    manager,
    packageName,
    version,
    deployment: { metadata: { ...deployment.metadata }, spec: deployment.spec! },
    rbac,
    crds,
    webhookConfigurations,
    samples,
  });

  // Objects of kinds a registry+v1 bundle may carry (operator-registry supported_resources.go).
  // OLM makes the Namespace, ServiceAccount, Deployment, bound roles, webhook Service and certificate.
  const boundClusterRoles = new Set(
    rbac.filter((o) => o.kind === 'ClusterRoleBinding').map((o) => (o as { roleRef: { name: string } }).roleRef.name),
  );
  const extra: Manifest[] = [
    metricsServiceManifest(config) as Manifest,
    networkPolicyManifest(config, features) as Manifest,
    ...(features.webhooks ? [webhookNetworkPolicyManifest(config) as Manifest] : []),
    ...rbac.filter((o) => o.kind === 'ClusterRole' && !boundClusterRoles.has(o.metadata.name)),
  ].map(withoutNamespace);

  const notes: string[] = [];
  if (manager.sharding && manager.sharding.kinds().length > 0)
    notes.push(
      'left out: the shard-label ValidatingAdmissionPolicy (sharding.yaml) — a registry+v1 bundle cannot carry it; apply it beside the bundle',
    );
  if (!csv.spec.installModes.some((m) => m.type === 'AllNamespaces' && m.supported))
    notes.push('the manager is namespaced: OLM v1 installs only bundles that support AllNamespaces');

  const yaml = (object: object) => manifestYaml([object], { regenerate: BUNDLE_REGENERATE_COMMAND });
  const annotations = {
    [BUNDLE_ANNOTATIONS.mediaType]: REGISTRY_V1_MEDIA_TYPE,
    [BUNDLE_ANNOTATIONS.manifests]: MANIFESTS_DIR,
    [BUNDLE_ANNOTATIONS.metadata]: METADATA_DIR,
    [BUNDLE_ANNOTATIONS.package]: packageName,
    [BUNDLE_ANNOTATIONS.channels]: channels.join(','),
    [BUNDLE_ANNOTATIONS.defaultChannel]: defaultChannel,
  };
  const files: GeneratedFile[] = [
    { path: `${MANIFESTS_DIR}${packageName}.clusterserviceversion.yaml`, content: yaml(csv) },
    ...crds.map(({ crd }) => ({
      path: `${MANIFESTS_DIR}${crd.spec.group}_${crd.spec.names.plural}.yaml`,
      content: yaml(crd),
    })),
    ...extra.map((object) => ({ path: manifestFileName(object), content: yaml(object) })),
    { path: ANNOTATIONS_FILE, content: yaml({ annotations }) },
    {
      path: BUNDLE_DOCKERFILE,
      content: [
        `# Generated by operator-runtime - do not edit. Regenerate: ${BUNDLE_REGENERATE_COMMAND}`,
        '# The bundle image: docker build -f bundle.Dockerfile -t <registry>/<package>-bundle:v<version> .',
        'FROM scratch',
        ...Object.entries(annotations).map(([key, value]) => `LABEL ${key}=${value}`),
        `COPY ${MANIFESTS_DIR} /${MANIFESTS_DIR}`,
        `COPY ${METADATA_DIR} /${METADATA_DIR}`,
        '',
      ].join('\n'),
    },
  ];
  return { files, notes };
}
