/**
 * `validate bundle` as a function: the files of a registry+v1 bundle in, one problem per finding
 * out. It implements the documented rules of operator-framework/api's default bundle validators
 * (pkg/validation/validation.go DefaultBundleValidators: ClusterServiceVersionValidator,
 * CustomResourceDefinitionValidator, BundleValidator) and operator-registry's bundle format check
 * (pkg/lib/bundle/validate.go ValidateBundleFormat/ValidateBundleContent), which are Go-only, plus
 * the removed-API check (removed-apis.ts). Each rule cites the Go function it follows.
 */
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import {
  BUNDLE_ANNOTATIONS,
  MANIFESTS_DIR,
  METADATA_DIR,
  REGISTRY_V1_MEDIA_TYPE,
  SUPPORTED_KINDS,
} from './bundle-format.js';
import { INSTALL_MODE_TYPES } from './cluster-service-version.js';
import { REMOVED_APIS, checkApiVersion, parseKubernetesVersion, type KubernetesVersion } from './removed-apis.js';
import { isSemver } from './semver.js';

/** One finding: the file and field it is about, and what is wrong. */
export interface BundleProblem {
  readonly severity: 'error' | 'warning';
  /** Relative to the bundle folder. */
  readonly file: string;
  /** A dotted path into the object, or '' for the file as a whole. */
  readonly field: string;
  readonly message: string;
}

export interface ValidateBundleOptions {
  /**
   * Refuse APIs removed in this Kubernetes version and warn on deprecated ones. @defaultValue the
   * CSV's `spec.minKubeVersion`, as operator-framework/api's removed-API validator does
   */
  readonly kubernetesVersion?: string;
}

export interface BundleValidation {
  readonly errors: readonly BundleProblem[];
  readonly warnings: readonly BundleProblem[];
}

/** `file: field: message`, the line `validate bundle` prints for a problem. */
export const formatProblem = (p: BundleProblem): string => `${p.file}${p.field ? `: ${p.field}` : ''}: ${p.message}`;

// yaml is required on first use, as manifest-yaml.ts does: operator-runtime/codegen is imported by
// operators for its constants, and the module costs ~3 MiB resident (docs/footprint.md).
const require = createRequire(import.meta.url);
const parseAllDocuments = (text: string) => (require('yaml') as typeof import('yaml')).parseAllDocuments(text);

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** k8s.io/apimachinery IsDNS1123Subdomain. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** k8s.io/apimachinery IsValidLabelValue (the CSV name becomes a label value). */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** operator-registry's bundle size limit: the gzipped bundle must fit one ConfigMap (bundle.go max_bundle_size). */
export const MAX_BUNDLE_COMPRESSED_BYTES = 1 << 20;

/** Annotation keys OLM reads case-sensitively (annotations.go CaseSensitiveAnnotationKeySet). */
const CASE_SENSITIVE_ANNOTATIONS = [
  'olm.operatorGroup',
  'olm.operatorNamespace',
  'olm.targetNamespaces',
  'olm.providedAPIs',
  'olm.skipRange',
];

interface LoadedManifest {
  readonly file: string;
  readonly object: Obj;
}

class Problems {
  readonly errors: BundleProblem[] = [];
  readonly warnings: BundleProblem[] = [];
  error(file: string, field: string, message: string): void {
    this.errors.push({ severity: 'error', file, field, message });
  }
  warn(file: string, field: string, message: string): void {
    this.warnings.push({ severity: 'warning', file, field, message });
  }
}

/** Parses a file's YAML documents; a syntax error is a problem, not a throw. */
function parseDocuments(file: string, content: string, problems: Problems): unknown[] | undefined {
  const docs = parseAllDocuments(content);
  const list = Array.isArray(docs) ? docs : [docs];
  const broken = list.find((d) => d.errors.length > 0);
  if (broken) {
    problems.error(file, '', `does not parse as YAML: ${broken.errors[0]!.message.split('\n')[0]!.replace(/:$/, '')}`);
    return undefined;
  }
  return list.map((d) => d.toJS() as unknown).filter((v) => v !== null && v !== undefined);
}

/**
 * The bundle's layout and annotations: operator-registry ValidateBundleFormat and validateAnnotations
 * (pkg/lib/bundle/validate.go).
 */
function checkFormat(files: ReadonlyMap<string, string>, problems: Problems): void {
  const paths = [...files.keys()];
  if (!paths.some((p) => p.startsWith(MANIFESTS_DIR)))
    problems.error(MANIFESTS_DIR, '', 'unable to locate the manifests directory');
  if (!paths.some((p) => p.startsWith(METADATA_DIR))) {
    problems.error(METADATA_DIR, '', 'unable to locate the metadata directory');
    return;
  }
  // The first file in metadata/ holding an `annotations` map is the annotations file.
  let annotationsFile: string | undefined;
  let annotations: Obj | undefined;
  for (const path of paths.filter((p) => p.startsWith(METADATA_DIR)).sort()) {
    const docs = parseDocuments(path, files.get(path)!, new Problems());
    const first = docs?.[0];
    if (isObject(first) && isObject(first.annotations)) {
      annotationsFile = path;
      annotations = first.annotations;
      break;
    }
  }
  if (!annotationsFile || !annotations) {
    problems.error(
      `${METADATA_DIR}annotations.yaml`,
      '',
      'could not find the annotations file (a file in metadata/ with an `annotations` map)',
    );
    return;
  }
  const field = (key: string) => `annotations["${key}"]`;
  const expect: [string, string][] = [
    [BUNDLE_ANNOTATIONS.mediaType, REGISTRY_V1_MEDIA_TYPE],
    [BUNDLE_ANNOTATIONS.manifests, MANIFESTS_DIR],
    [BUNDLE_ANNOTATIONS.metadata, METADATA_DIR],
  ];
  for (const [key, value] of expect) {
    if (!(key in annotations)) problems.error(annotationsFile, field(key), 'missing annotation');
    else if (annotations[key] !== value)
      problems.error(
        annotationsFile,
        field(key),
        `expected ${JSON.stringify(value)}, got ${JSON.stringify(annotations[key])}`,
      );
  }
  for (const key of [BUNDLE_ANNOTATIONS.package, BUNDLE_ANNOTATIONS.channels]) {
    if (!(key in annotations)) problems.error(annotationsFile, field(key), 'missing annotation');
    else if (!str(annotations[key])) problems.error(annotationsFile, field(key), 'must not be empty');
  }
  const defaultChannel = annotations[BUNDLE_ANNOTATIONS.defaultChannel];
  if (BUNDLE_ANNOTATIONS.defaultChannel in annotations && !str(defaultChannel))
    problems.error(annotationsFile, field(BUNDLE_ANNOTATIONS.defaultChannel), 'must not be empty when present');
  const channels = (str(annotations[BUNDLE_ANNOTATIONS.channels]) ?? '').split(',').map((c) => c.trim());
  // operator-registry resolves the package's default channel among the bundle's channels.
  if (str(defaultChannel) && channels[0] && !channels.includes(str(defaultChannel)!))
    problems.warn(
      annotationsFile,
      field(BUNDLE_ANNOTATIONS.defaultChannel),
      `${JSON.stringify(defaultChannel)} is not one of the bundle's channels (${channels.join(', ')})`,
    );
}

/**
 * manifests/: one object per file, of a kind registry+v1 supports, in no subfolder or hidden file
 * (operator-framework/api pkg/manifests/bundleloader.go loadBundle; operator-registry
 * ValidateBundleContent and supported_resources.go).
 */
function loadManifests(files: ReadonlyMap<string, string>, problems: Problems): LoadedManifest[] {
  const out: LoadedManifest[] = [];
  for (const [file, content] of [...files]
    .filter(([p]) => p.startsWith(MANIFESTS_DIR))
    .sort(([a], [b]) => (a < b ? -1 : 1))) {
    const rest = file.slice(MANIFESTS_DIR.length);
    if (rest.includes('/')) {
      problems.error(file, '', 'the manifests directory must not contain directories');
      continue;
    }
    if (rest.startsWith('.')) {
      problems.error(file, '', 'the manifests directory must not contain hidden files');
      continue;
    }
    const docs = parseDocuments(file, content, problems);
    if (!docs) continue;
    if (docs.length === 0) {
      problems.error(file, '', 'holds no object');
      continue;
    }
    if (docs.length > 1)
      problems.error(file, '', `holds ${docs.length} objects; OLM reads only the first of each file`);
    const object = docs[0];
    if (!isObject(object)) {
      problems.error(file, '', 'is not a Kubernetes object');
      continue;
    }
    // validateVersionKind (csv.go) and the loader's decoding.
    if (!str(object.apiVersion)) problems.error(file, 'apiVersion', "'apiVersion' is missing");
    if (!str(object.kind)) {
      problems.error(file, 'kind', "'kind' is missing");
      continue;
    }
    if (!SUPPORTED_KINDS.has(object.kind as string)) {
      problems.error(file, 'kind', `${String(object.kind)} is not a supported type for a registry+v1 bundle`);
      continue;
    }
    // validateKubectlable: the object's metadata must be valid (a name that is a DNS subdomain).
    const name = isObject(object.metadata) ? str(object.metadata.name) : undefined;
    if (!name) problems.error(file, 'metadata.name', 'name is required');
    else if (object.kind !== 'ClusterServiceVersion' && (!DNS_SUBDOMAIN.test(name) || name.length > 253))
      problems.error(file, 'metadata.name', `${JSON.stringify(name)} is not a DNS-1123 subdomain`);
    out.push({ file, object });
  }
  return out;
}

/** csv.go parseCSVNameFormat: a DNS-1123 subdomain that is also a valid label value. */
function csvNameProblem(name: string): string | undefined {
  const why: string[] = [];
  if (!DNS_SUBDOMAIN.test(name) || name.length > 253) why.push('not a DNS-1123 subdomain');
  if (name.length > 63 || !LABEL_VALUE.test(name)) why.push('not a valid label value (at most 63 characters)');
  return why.length ? `${JSON.stringify(name)} is invalid: ${why.join(', ')}` : undefined;
}

interface OwnedKey {
  readonly name: string;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

const gvkText = (k: { group: string; version: string; kind: string }) => `${k.group}/${k.version}, Kind=${k.kind}`;

/** The ClusterServiceVersion rules of operator-framework/api csv.go validateCSV. */
function checkCsv(file: string, csv: Obj, packageName: string | undefined, problems: Problems): OwnedKey[] {
  const metadata = isObject(csv.metadata) ? csv.metadata : {};
  const spec = isObject(csv.spec) ? csv.spec : undefined;
  const name = str(metadata.name) ?? '';
  // validateCSV: metadata.name and spec.replaces are CSV names.
  if (name) {
    const bad = csvNameProblem(name);
    if (bad) problems.error(file, 'metadata.name', bad);
  }
  if (!spec) {
    problems.error(file, 'spec', 'required field missing');
    return [];
  }
  const replaces = str(spec.replaces);
  if (replaces) {
    const bad = csvNameProblem(replaces);
    if (bad) problems.error(file, 'spec.replaces', bad);
  }
  // OperatorVersion (pkg/lib/version) unmarshals spec.version as semver; OLM v1 and opm need it.
  const version = spec.version;
  if (version === undefined) problems.error(file, 'spec.version', 'required: the operator version (semver)');
  else if (!isSemver(version))
    problems.error(file, 'spec.version', `${JSON.stringify(version)} is not a semantic version`);
  // good_practices.go checkBundleName: the name should be <package>.v<semver>.
  if (name && isSemver(version)) {
    const expected = `${packageName ?? name.split('.v')[0]}.v${version}`;
    if (name !== expected)
      problems.warn(file, 'metadata.name', `should be ${JSON.stringify(expected)} (<package>.v<spec.version>)`);
  }
  // checkFields (typecheck.go): the fields without omitempty in ClusterServiceVersionSpec.
  if (!str(spec.displayName)) problems.error(file, 'spec.displayName', 'required field missing');
  const install = isObject(spec.install) ? spec.install : undefined;
  if (!install) problems.error(file, 'spec.install', 'required field missing');
  else {
    if (!str(install.strategy)) problems.error(file, 'spec.install.strategy', 'required field missing');
    // OLM resolves only the deployment install strategy (operator-lifecycle-manager install/resolver.go).
    else if (install.strategy !== 'deployment')
      problems.error(
        file,
        'spec.install.strategy',
        `${JSON.stringify(install.strategy)} is not supported; use "deployment"`,
      );
    const strategySpec = isObject(install.spec) ? install.spec : undefined;
    if (strategySpec && !Array.isArray(strategySpec.deployments))
      problems.error(file, 'spec.install.spec.deployments', 'required field missing');
    arr(strategySpec?.deployments).forEach((d, i) => {
      if (!isObject(d) || !str(d.name))
        problems.error(file, `spec.install.spec.deployments[${i}].name`, 'required field missing');
      if (!isObject(d) || !isObject(d.spec))
        problems.error(file, `spec.install.spec.deployments[${i}].spec`, 'required field missing');
    });
    for (const key of ['permissions', 'clusterPermissions'] as const)
      arr(strategySpec?.[key]).forEach((p, i) => {
        if (!isObject(p) || !str(p.serviceAccountName))
          problems.error(file, `spec.install.spec.${key}[${i}].serviceAccountName`, 'required field missing');
        if (!isObject(p) || !Array.isArray(p.rules))
          problems.error(file, `spec.install.spec.${key}[${i}].rules`, 'required field missing');
      });
  }
  // validateMinKubeVersion.
  const minKubeVersion = str(spec.minKubeVersion)?.trim();
  if (!minKubeVersion)
    problems.warn(file, 'spec.minKubeVersion', 'not set: the bundle is taken to run on every Kubernetes version');
  else if (!parseKubernetesVersion(minKubeVersion))
    problems.error(file, 'spec.minKubeVersion', `${JSON.stringify(minKubeVersion)} is not a valid version`);

  // Owned CRDs (getProvidedAPIs): name is <plural>.<group>; version and kind required.
  const crds = isObject(spec.customresourcedefinitions) ? spec.customresourcedefinitions : {};
  const owned: OwnedKey[] = [];
  arr(crds.owned).forEach((o, i) => {
    const at = `spec.customresourcedefinitions.owned[${i}]`;
    if (!isObject(o)) return problems.error(file, at, 'is not an object');
    const ownedName = str(o.name) ?? '';
    const dot = ownedName.indexOf('.');
    if (dot < 1)
      problems.error(file, `${at}.name`, `couldn't parse plural.group from crd name: ${JSON.stringify(ownedName)}`);
    if (!str(o.version)) problems.error(file, `${at}.version`, 'required field missing');
    if (!str(o.kind)) problems.error(file, `${at}.kind`, 'required field missing');
    if (dot >= 1 && str(o.version) && str(o.kind))
      owned.push({ name: ownedName, group: ownedName.slice(dot + 1), version: str(o.version)!, kind: str(o.kind)! });
  });

  checkInstallModes(file, spec, problems);
  checkExamples(file, metadata, owned, problems);
  // ValidateAnnotationNames (annotations.go).
  const annotations = isObject(metadata.annotations) ? metadata.annotations : {};
  for (const key of Object.keys(annotations)) {
    const known = CASE_SENSITIVE_ANNOTATIONS.find((k) => k.toLowerCase() === key.toLowerCase());
    if (known && known !== key)
      problems.error(
        file,
        `metadata.annotations["${key}"]`,
        `annotation ${key} uses wrong case and should be ${known} instead`,
      );
    if (key === 'olm.properties')
      problems.warn(
        file,
        `metadata.annotations["${key}"]`,
        'found olm.properties annotation, please define these properties in metadata/properties.yaml instead',
      );
  }
  // bundle.go validateRelatedImages.
  arr(spec.relatedImages).forEach((r, i) => {
    const image = isObject(r) ? str(r.image) : undefined;
    if (!image) problems.error(file, `spec.relatedImages[${i}].image`, 'empty image');
    else if (
      !/^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*(:[\w][\w.-]{0,127})?(@sha256:[0-9a-f]{64})?$/.test(
        image,
      )
    )
      problems.error(file, `spec.relatedImages[${i}].image`, `${JSON.stringify(image)} is not a valid image reference`);
  });
  return owned;
}

/** csv.go validateInstallModes. */
function checkInstallModes(file: string, spec: Obj, problems: Problems): void {
  const modes = arr(spec.installModes);
  if (modes.length === 0) return problems.error(file, 'spec.installModes', 'install modes not found');
  const seen = new Set<unknown>();
  let anySupported = false;
  modes.forEach((m, i) => {
    const type = isObject(m) ? m.type : undefined;
    if (!INSTALL_MODE_TYPES.includes(type as (typeof INSTALL_MODE_TYPES)[number]))
      problems.error(
        file,
        `spec.installModes[${i}].type`,
        `${JSON.stringify(type)} is not one of ${INSTALL_MODE_TYPES.join(', ')}`,
      );
    if (seen.has(type)) problems.error(file, `spec.installModes[${i}]`, 'duplicate install modes present');
    else if (isObject(m) && m.supported === true) anySupported = true;
    seen.add(type);
  });
  if (!anySupported) problems.error(file, 'spec.installModes', 'none of InstallModeTypes are supported');
  const converts = arr(spec.webhookdefinitions).some((w) => isObject(w) && arr(w.conversionCRDs).length > 0);
  const onlyAll = modes.every((m) => isObject(m) && (m.type === 'AllNamespaces') === (m.supported === true));
  if (converts && !onlyAll)
    problems.error(
      file,
      'spec.installModes',
      'only AllNamespaces InstallModeType is supported when conversionCRDs is present',
    );
}

/** csv.go validateExamplesAnnotations and matchGVKProvidedAPIs. */
function checkExamples(file: string, metadata: Obj, owned: readonly OwnedKey[], problems: Problems): void {
  const annotations = isObject(metadata.annotations) ? metadata.annotations : {};
  const field = 'metadata.annotations["alm-examples"]';
  const text = str(annotations['alm-examples']) ?? str(annotations['olm.examples']);
  if (text === undefined) return problems.warn(file, field, 'example annotations not found');
  if (text.trim() === '') return;
  let examples: unknown;
  try {
    examples = JSON.parse(text);
  } catch (error) {
    return problems.error(file, field, `invalid example: ${(error as Error).message}`);
  }
  if (!Array.isArray(examples)) return problems.error(file, field, 'invalid example: must be a JSON array of objects');
  const found = new Set<string>();
  examples.forEach((e, i) => {
    const apiVersion = isObject(e) ? str(e.apiVersion) : undefined;
    const kind = isObject(e) ? str(e.kind) : undefined;
    const [group, version] = apiVersion?.includes('/') ? apiVersion.split('/') : ['', apiVersion ?? ''];
    const key = gvkText({ group: group!, version: version!, kind: kind ?? '' });
    found.add(key);
    if (!owned.some((o) => gvkText(o) === key))
      problems.error(
        file,
        `${field}[${i}]`,
        `example must have a provided API: ${key} is not an owned CRD of this CSV`,
      );
  });
  for (const o of owned)
    if (!found.has(gvkText(o)))
      problems.warn(file, field, `provided API should have an example annotation: ${gvkText(o)}`);
}

/** CRD basics the API server checks (crd.go runs apiextensions validation; these are its rules a bundle breaks most). */
function checkCrd(
  { file, object }: LoadedManifest,
  problems: Problems,
): { group: string; kind: string; versions: string[] } | undefined {
  if (object.apiVersion !== 'apiextensions.k8s.io/v1' && object.apiVersion !== 'apiextensions.k8s.io/v1beta1') {
    problems.error(file, 'apiVersion', `unsupported api version of CRD: ${String(object.apiVersion)}`);
    return undefined;
  }
  const spec = isObject(object.spec) ? object.spec : {};
  const names = isObject(spec.names) ? spec.names : {};
  const group = str(spec.group);
  const plural = str(names.plural);
  const kind = str(names.kind);
  if (!group) problems.error(file, 'spec.group', 'required field missing');
  if (!plural) problems.error(file, 'spec.names.plural', 'required field missing');
  if (!kind) problems.error(file, 'spec.names.kind', 'required field missing');
  const name = isObject(object.metadata) ? str(object.metadata.name) : undefined;
  if (group && plural && name !== `${plural}.${group}`)
    problems.error(
      file,
      'metadata.name',
      `must be spec.names.plural+"."+spec.group (${plural}.${group}), got ${JSON.stringify(name)}`,
    );
  const versions = arr(spec.versions).filter(isObject);
  if (versions.length === 0 && !str(spec.version))
    problems.error(file, 'spec.versions', 'must have at least one version');
  if (versions.length > 0 && versions.filter((v) => v.storage === true).length !== 1)
    problems.error(file, 'spec.versions', 'must have exactly one version marked as storage version');
  if (!group || !kind) return undefined;
  return {
    group,
    kind,
    versions: versions.length ? versions.map((v) => str(v.name) ?? '') : [str(spec.version) ?? ''],
  };
}

/** Validates the files of a bundle (paths relative to its folder, with `/` separators). */
export function validateBundle(
  files: ReadonlyMap<string, string>,
  options: ValidateBundleOptions = {},
): BundleValidation {
  const problems = new Problems();
  for (const path of files.keys())
    if (path.split('/').some((segment) => segment.startsWith('.')) && !path.startsWith(MANIFESTS_DIR))
      problems.warn(path, '', 'hidden file: left out of the bundle by OLM');
  checkFormat(files, problems);
  const manifests = loadManifests(files, problems);

  const annotationsFile = files.get(`${METADATA_DIR}annotations.yaml`);
  const annotationsDoc = annotationsFile ? parseDocuments('', annotationsFile, new Problems())?.[0] : undefined;
  const packageName =
    isObject(annotationsDoc) && isObject(annotationsDoc.annotations)
      ? str(annotationsDoc.annotations[BUNDLE_ANNOTATIONS.package])
      : undefined;

  // bundleloader.go: exactly one CSV.
  const csvs = manifests.filter((m) => m.object.kind === 'ClusterServiceVersion');
  if (csvs.length === 0) problems.error(MANIFESTS_DIR, '', 'unable to find a ClusterServiceVersion in the bundle');
  for (const extra of csvs.slice(1))
    problems.error(extra.file, '', 'invalid bundle: contains multiple ClusterServiceVersions');
  const csv = csvs[0];
  const owned = csv ? checkCsv(csv.file, csv.object, packageName, problems) : [];
  const csvSpec = csv && isObject(csv.object.spec) ? csv.object.spec : {};

  // bundle.go validateOwnedCRDs: owned CRDs present, no unowned CRD, no duplicate.
  const crdKeys = new Map<string, string>();
  const crdNames = new Map<string, string>();
  const crdGroupKinds = new Map<string, { file: string; key: string }>();
  for (const m of manifests.filter((m) => m.object.kind === 'CustomResourceDefinition')) {
    const crd = checkCrd(m, problems);
    if (!crd) continue;
    crdGroupKinds.set(`${crd.group}/${crd.kind}`, {
      file: m.file,
      key: gvkText({ group: crd.group, version: crd.versions[0] ?? '', kind: crd.kind }),
    });
    crdNames.set(`${crd.group}/${crd.kind}`, String(isObject(m.object.metadata) ? m.object.metadata.name : ''));
    for (const version of crd.versions) {
      const key = gvkText({ group: crd.group, version, kind: crd.kind });
      if (crdKeys.has(key)) problems.error(m.file, '', `duplicate CRD ${JSON.stringify(key)} in bundle`);
      crdKeys.set(key, m.file);
    }
  }
  const ownedGroupKinds = new Set<string>();
  owned.forEach((o, i) => {
    const key = gvkText(o);
    const at = `spec.customresourcedefinitions.owned[${i}]`;
    if (!crdKeys.has(key)) problems.error(csv!.file, at, `owned CRD ${JSON.stringify(key)} not found in bundle`);
    else {
      ownedGroupKinds.add(`${o.group}/${o.kind}`);
      // OLM finds the CRD by this name (CRDDescription.Name).
      const crdName = crdNames.get(`${o.group}/${o.kind}`);
      if (crdName !== o.name)
        problems.error(
          csv!.file,
          `${at}.name`,
          `${JSON.stringify(o.name)} does not match the CRD's name ${JSON.stringify(crdName)} (${crdKeys.get(key)})`,
        );
    }
  });
  for (const [groupKind, { file, key }] of crdGroupKinds)
    if (!ownedGroupKinds.has(groupKind))
      problems.error(file, '', `CRD ${JSON.stringify(key)} is present in bundle but not defined in CSV`);

  // bundle.go validateServiceAccounts: OLM creates the CSV's ServiceAccounts itself.
  const serviceAccounts = new Set(
    arr(isObject(csvSpec.install) && isObject(csvSpec.install.spec) ? csvSpec.install.spec.deployments : [])
      .map((d) =>
        isObject(d) && isObject(d.spec) && isObject(d.spec.template) && isObject(d.spec.template.spec)
          ? str(d.spec.template.spec.serviceAccountName)
          : undefined,
      )
      .filter(Boolean),
  );
  for (const m of manifests.filter((m) => m.object.kind === 'ServiceAccount' && m.object.apiVersion === 'v1')) {
    const name = isObject(m.object.metadata) ? str(m.object.metadata.name) : undefined;
    if (name && serviceAccounts.has(name))
      problems.error(
        m.file,
        'metadata.name',
        `ServiceAccount ${name} is already specified in the CSV (OLM creates it); remove this manifest or rename it`,
      );
  }

  // bundle.go validateBundleSize: gzipped size under 1 MiB, warn above 85 %.
  let compressed = 0;
  for (const content of files.values()) compressed += gzipSync(content).length;
  if (compressed > MAX_BUNDLE_COMPRESSED_BYTES)
    problems.error(
      '.',
      '',
      `maximum bundle compressed size exceeded: ~${compressed} bytes gzipped, max ${MAX_BUNDLE_COMPRESSED_BYTES}`,
    );
  else if (compressed > MAX_BUNDLE_COMPRESSED_BYTES * 0.85)
    problems.warn(
      '.',
      '',
      `nearing maximum bundle compressed size: ~${compressed} bytes gzipped, max ${MAX_BUNDLE_COMPRESSED_BYTES}`,
    );

  checkRemovedApis(manifests, options, csvSpec, problems);
  return { errors: problems.errors, warnings: problems.warnings };
}

/**
 * removed_apis.go validateDeprecatedAPIS: against `--kubernetes-version`, else the CSV's
 * minKubeVersion, an API removed at or before it is an error and a deprecated one a warning;
 * with neither, any API in the removal table is a warning.
 */
function checkRemovedApis(
  manifests: readonly LoadedManifest[],
  options: ValidateBundleOptions,
  csvSpec: Obj,
  problems: Problems,
): void {
  let target: KubernetesVersion | undefined;
  if (options.kubernetesVersion !== undefined) {
    target = parseKubernetesVersion(options.kubernetesVersion);
    if (!target) {
      problems.error(
        '.',
        '',
        `--kubernetes-version ${JSON.stringify(options.kubernetesVersion)} is not a Kubernetes version such as 1.30`,
      );
      return;
    }
  } else if (str(csvSpec.minKubeVersion)) target = parseKubernetesVersion(str(csvSpec.minKubeVersion)!);
  for (const { file, object } of manifests) {
    if (target) {
      const finding = checkApiVersion(object, target);
      if (finding?.severity === 'error') problems.error(file, 'apiVersion', finding.message);
      else if (finding) problems.warn(file, 'apiVersion', finding.message);
    } else {
      const removed = REMOVED_APIS.find((r) => r.apiVersion === object.apiVersion && r.kind === object.kind);
      if (removed)
        problems.warn(
          file,
          'apiVersion',
          `${String(object.apiVersion)} ${String(object.kind)} is removed in Kubernetes ${removed.removedIn}; use ${removed.replacement}`,
        );
    }
  }
}
