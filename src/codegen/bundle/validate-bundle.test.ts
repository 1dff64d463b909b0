/**
 * `validateBundle`, rule by rule: a generated bundle is clean, and each rule has a fixture of its
 * own — that bundle with one thing broken — that yields exactly its line (file, field, message).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { parseAllDocuments, stringify } from 'yaml';
import { kinds } from '../../client/kinds.js';
import { defineCustomKind, Type } from '../../crd/index.js';
import { Manager } from '../../manager/manager.js';
import { offlineClient } from '../../rbac/offline-client.js';
import { defineConfig } from '../config.js';
import { generateBundle } from './generate-bundle.js';
import { formatProblem, validateBundle, type ValidateBundleOptions } from './validate-bundle.js';

const GIZMO = defineCustomKind({
  group: 'example.com',
  names: { kind: 'Gizmo', plural: 'gizmos' },
  scope: 'Namespaced',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: { spec: Type.Object({ size: Type.Integer({ description: 'How big.' }) }) },
    },
  ],
});

const CSV = 'manifests/gizmo-operator.clusterserviceversion.yaml';
const CRD = 'manifests/example.com_gizmos.yaml';
const ANNOTATIONS = 'metadata/annotations.yaml';
const SERVICE = 'manifests/gizmo-operator-metrics_v1_service.yaml';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let valid: Map<string, string>;

before(async () => {
  const { files } = await generateBundle(
    defineConfig({
      name: 'gizmo-operator',
      namespace: 'gizmo-system',
      image: 'example.com/gizmo-operator:2.0.0',
      kinds: [GIZMO],
      manager: () => {
        const manager = new Manager({ client: offlineClient() });
        manager
          .controller('gizmo')
          .for(GIZMO)
          .writes(kinds.ConfigMap, ['create'])
          .complete(async () => undefined);
        return manager;
      },
    }),
    {
      version: '2.0.0',
      samples: [{ apiVersion: 'example.com/v1', kind: 'Gizmo', metadata: { name: 'g' }, spec: { size: 1 } }],
    },
  );
  valid = new Map(files.map((f) => [f.path, f.content]));
});

const read = (files: Map<string, string>, path: string): Obj => parseAllDocuments(files.get(path)!)[0]!.toJS() as Obj;

/** The valid bundle with one change: `edit` receives a copy of the files and changes them. */
function broken(edit: (files: Map<string, string>) => void): Map<string, string> {
  const files = new Map(valid);
  edit(files);
  return files;
}

/** Edits one object of the bundle in place. */
const editObject = (path: string, change: (o: Obj) => void) => (files: Map<string, string>) => {
  const object = read(files, path);
  change(object);
  files.set(path, stringify(object));
};

const lines = (files: Map<string, string>, options?: ValidateBundleOptions) => {
  const result = validateBundle(files, options);
  return {
    errors: result.errors.map((p) => formatProblem(p)),
    warnings: result.warnings.map((p) => formatProblem(p)),
  };
};

interface Case {
  readonly rule: string;
  readonly edit: (files: Map<string, string>) => void;
  readonly options?: ValidateBundleOptions;
  readonly error?: string;
  readonly warning?: string;
}

const PDB = stringify({
  apiVersion: 'policy/v1beta1',
  kind: 'PodDisruptionBudget',
  metadata: { name: 'gizmo-pdb' },
  spec: { minAvailable: 1, selector: { matchLabels: { app: 'gizmo' } } },
});
const PDB_FILE = 'manifests/gizmo-pdb_policy_v1beta1_poddisruptionbudget.yaml';

const CASES: readonly Case[] = [
  // operator-registry ValidateBundleFormat / validateAnnotations
  {
    rule: 'the manifests directory exists',
    edit: (f) => [...f.keys()].filter((p) => p.startsWith('manifests/')).forEach((p) => f.delete(p)),
    error: 'manifests/: unable to locate the manifests directory',
  },
  {
    rule: 'the metadata directory exists',
    edit: (f) => f.delete(ANNOTATIONS),
    error: 'metadata/: unable to locate the metadata directory',
  },
  {
    rule: 'metadata/ holds an annotations file',
    edit: (f) => f.set(ANNOTATIONS, 'notAnnotations: {}\n'),
    error:
      'metadata/annotations.yaml: could not find the annotations file (a file in metadata/ with an `annotations` map)',
  },
  {
    rule: 'the package annotation is present',
    edit: editObject(ANNOTATIONS, (o) => delete o.annotations['operators.operatorframework.io.bundle.package.v1']),
    error:
      'metadata/annotations.yaml: annotations["operators.operatorframework.io.bundle.package.v1"]: missing annotation',
  },
  {
    rule: 'the media type is registry+v1',
    edit: editObject(
      ANNOTATIONS,
      (o) => (o.annotations['operators.operatorframework.io.bundle.mediatype.v1'] = 'plain'),
    ),
    error:
      'metadata/annotations.yaml: annotations["operators.operatorframework.io.bundle.mediatype.v1"]: expected "registry+v1", got "plain"',
  },
  {
    rule: 'the manifests annotation names manifests/',
    edit: editObject(
      ANNOTATIONS,
      (o) => (o.annotations['operators.operatorframework.io.bundle.manifests.v1'] = 'yaml/'),
    ),
    error:
      'metadata/annotations.yaml: annotations["operators.operatorframework.io.bundle.manifests.v1"]: expected "manifests/", got "yaml/"',
  },
  {
    rule: 'channels are not empty',
    edit: editObject(ANNOTATIONS, (o) => (o.annotations['operators.operatorframework.io.bundle.channels.v1'] = '')),
    error:
      'metadata/annotations.yaml: annotations["operators.operatorframework.io.bundle.channels.v1"]: must not be empty',
  },
  {
    rule: 'a default channel, when present, is not empty',
    edit: editObject(
      ANNOTATIONS,
      (o) => (o.annotations['operators.operatorframework.io.bundle.channel.default.v1'] = ''),
    ),
    error:
      'metadata/annotations.yaml: annotations["operators.operatorframework.io.bundle.channel.default.v1"]: must not be empty when present',
  },
  {
    rule: 'the default channel is one of the channels',
    edit: editObject(
      ANNOTATIONS,
      (o) => (o.annotations['operators.operatorframework.io.bundle.channel.default.v1'] = 'stable'),
    ),
    warning:
      'metadata/annotations.yaml: annotations["operators.operatorframework.io.bundle.channel.default.v1"]: "stable" is not one of the bundle\'s channels (alpha)',
  },
  // bundleloader.go loadBundle, ValidateBundleContent
  {
    rule: 'manifests/ holds no directory',
    edit: (f) => f.set('manifests/extra/service.yaml', f.get(SERVICE)!),
    error: 'manifests/extra/service.yaml: the manifests directory must not contain directories',
  },
  {
    rule: 'manifests/ holds no hidden file',
    edit: (f) => f.set('manifests/.service.yaml', f.get(SERVICE)!),
    error: 'manifests/.service.yaml: the manifests directory must not contain hidden files',
  },
  {
    rule: 'one object per file',
    edit: (f) => f.set(SERVICE, `${f.get(SERVICE)!}---\n${f.get(SERVICE)!.split('\n').slice(2).join('\n')}`),
    error: `${SERVICE}: holds 2 objects; OLM reads only the first of each file`,
  },
  {
    rule: 'a manifest parses',
    edit: (f) => f.set(SERVICE, 'kind: [Service\n'),
    error: `${SERVICE}: does not parse as YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1`,
  },
  {
    rule: 'kinds are those registry+v1 supports',
    edit: (f) =>
      f.set('manifests/d.yaml', stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } })),
    error: 'manifests/d.yaml: kind: Deployment is not a supported type for a registry+v1 bundle',
  },
  {
    rule: 'an object has a valid name',
    edit: editObject(SERVICE, (o) => (o.metadata.name = 'Metrics_Service')),
    error: `${SERVICE}: metadata.name: "Metrics_Service" is not a DNS-1123 subdomain`,
  },
  {
    rule: 'the bundle has a CSV',
    edit: (f) => f.delete(CSV),
    error: 'manifests/: unable to find a ClusterServiceVersion in the bundle',
  },
  {
    rule: 'the bundle has one CSV',
    edit: (f) => f.set('manifests/zz.clusterserviceversion.yaml', f.get(CSV)!),
    error: 'manifests/zz.clusterserviceversion.yaml: invalid bundle: contains multiple ClusterServiceVersions',
  },
  // csv.go validateCSV
  {
    rule: 'the CSV name is a DNS subdomain and label value',
    edit: editObject(CSV, (o) => (o.metadata.name = 'Gizmo_Operator.v2.0.0')),
    error: `${CSV}: metadata.name: "Gizmo_Operator.v2.0.0" is invalid: not a DNS-1123 subdomain`,
  },
  {
    rule: 'spec.replaces is a CSV name',
    edit: editObject(CSV, (o) => (o.spec.replaces = 'gizmo operator')),
    error: `${CSV}: spec.replaces: "gizmo operator" is invalid: not a DNS-1123 subdomain, not a valid label value (at most 63 characters)`,
  },
  {
    rule: 'spec.version is present',
    edit: editObject(CSV, (o) => delete o.spec.version),
    error: `${CSV}: spec.version: required: the operator version (semver)`,
  },
  {
    rule: 'spec.version is semver',
    edit: editObject(CSV, (o) => (o.spec.version = '2.0')),
    error: `${CSV}: spec.version: "2.0" is not a semantic version`,
  },
  {
    rule: 'the CSV is named <package>.v<version>',
    edit: editObject(CSV, (o) => (o.spec.version = '2.0.1')),
    warning: `${CSV}: metadata.name: should be "gizmo-operator.v2.0.1" (<package>.v<spec.version>)`,
  },
  {
    rule: 'spec.displayName is required',
    edit: editObject(CSV, (o) => delete o.spec.displayName),
    error: `${CSV}: spec.displayName: required field missing`,
  },
  {
    rule: 'spec.install is required',
    edit: editObject(CSV, (o) => delete o.spec.install),
    error: `${CSV}: spec.install: required field missing`,
  },
  {
    rule: 'the install strategy is deployment',
    edit: editObject(CSV, (o) => (o.spec.install.strategy = 'helm')),
    error: `${CSV}: spec.install.strategy: "helm" is not supported; use "deployment"`,
  },
  {
    rule: 'the install strategy lists deployments',
    edit: editObject(CSV, (o) => delete o.spec.install.spec.deployments),
    error: `${CSV}: spec.install.spec.deployments: required field missing`,
  },
  {
    rule: 'permissions name their ServiceAccount',
    edit: editObject(CSV, (o) => delete o.spec.install.spec.clusterPermissions[0].serviceAccountName),
    error: `${CSV}: spec.install.spec.clusterPermissions[0].serviceAccountName: required field missing`,
  },
  {
    rule: 'minKubeVersion is set',
    edit: editObject(CSV, (o) => delete o.spec.minKubeVersion),
    warning: `${CSV}: spec.minKubeVersion: not set: the bundle is taken to run on every Kubernetes version`,
  },
  {
    rule: 'minKubeVersion is a version',
    edit: editObject(CSV, (o) => (o.spec.minKubeVersion = 'latest')),
    error: `${CSV}: spec.minKubeVersion: "latest" is not a valid version`,
  },
  {
    rule: 'an owned CRD is named plural.group',
    edit: editObject(CSV, (o) => (o.spec.customresourcedefinitions.owned[0].name = 'gizmos')),
    error: `${CSV}: spec.customresourcedefinitions.owned[0].name: couldn't parse plural.group from crd name: "gizmos"`,
  },
  {
    rule: 'install modes are present',
    edit: editObject(CSV, (o) => delete o.spec.installModes),
    error: `${CSV}: spec.installModes: install modes not found`,
  },
  {
    rule: 'install modes are not repeated',
    edit: editObject(CSV, (o) => o.spec.installModes.push({ type: 'AllNamespaces', supported: true })),
    error: `${CSV}: spec.installModes[4]: duplicate install modes present`,
  },
  {
    rule: 'an install mode is supported',
    edit: editObject(CSV, (o) => o.spec.installModes.forEach((m: Obj) => (m.supported = false))),
    error: `${CSV}: spec.installModes: none of InstallModeTypes are supported`,
  },
  {
    rule: 'a conversion webhook needs AllNamespaces only',
    edit: editObject(CSV, (o) => {
      o.spec.installModes[0].supported = true;
      o.spec.webhookdefinitions = [
        {
          type: 'ConversionWebhook',
          generateName: 'cgizmos.example.com',
          deploymentName: 'gizmo-operator',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          conversionCRDs: ['gizmos.example.com'],
        },
      ];
    }),
    error: `${CSV}: spec.installModes: only AllNamespaces InstallModeType is supported when conversionCRDs is present`,
  },
  {
    rule: 'examples are present',
    edit: editObject(CSV, (o) => delete o.metadata.annotations['alm-examples']),
    warning: `${CSV}: metadata.annotations["alm-examples"]: example annotations not found`,
  },
  {
    rule: 'examples parse',
    edit: editObject(CSV, (o) => (o.metadata.annotations['alm-examples'] = '[{"kind": }]')),
    error: `${CSV}: metadata.annotations["alm-examples"]: invalid example: Unexpected token '}', "[{"kind": }]" is not valid JSON`,
  },
  {
    rule: 'examples name owned APIs',
    edit: editObject(
      CSV,
      (o) =>
        (o.metadata.annotations['alm-examples'] = JSON.stringify([
          { apiVersion: 'example.com/v1', kind: 'Gizmo', metadata: { name: 'g' } },
          { apiVersion: 'example.com/v2', kind: 'Gizmo', metadata: { name: 'g' } },
        ])),
    ),
    error: `${CSV}: metadata.annotations["alm-examples"][1]: example must have a provided API: example.com/v2, Kind=Gizmo is not an owned CRD of this CSV`,
  },
  {
    rule: 'every owned API has an example',
    edit: editObject(CSV, (o) => (o.metadata.annotations['alm-examples'] = '[]')),
    warning: `${CSV}: metadata.annotations["alm-examples"]: provided API should have an example annotation: example.com/v1, Kind=Gizmo`,
  },
  {
    rule: 'case-sensitive annotation keys',
    edit: editObject(CSV, (o) => (o.metadata.annotations['olm.skiprange'] = '<2.0.0')),
    error: `${CSV}: metadata.annotations["olm.skiprange"]: annotation olm.skiprange uses wrong case and should be olm.skipRange instead`,
  },
  {
    rule: 'olm.properties belongs in metadata/properties.yaml',
    edit: editObject(CSV, (o) => (o.metadata.annotations['olm.properties'] = '[]')),
    warning: `${CSV}: metadata.annotations["olm.properties"]: found olm.properties annotation, please define these properties in metadata/properties.yaml instead`,
  },
  {
    rule: 'related images are image references',
    edit: editObject(CSV, (o) => (o.spec.relatedImages[0].image = 'Example.com/Gizmo:latest tag')),
    error: `${CSV}: spec.relatedImages[0].image: "Example.com/Gizmo:latest tag" is not a valid image reference`,
  },
  // bundle.go validateOwnedCRDs, validateServiceAccounts, validateBundleSize
  {
    rule: 'owned CRDs are in the bundle',
    edit: editObject(CSV, (o) => (o.spec.customresourcedefinitions.owned[0].version = 'v2')),
    error: `${CSV}: spec.customresourcedefinitions.owned[0]: owned CRD "example.com/v2, Kind=Gizmo" not found in bundle`,
  },
  {
    rule: 'an owned CRD names the CRD file it matches',
    edit: editObject(CSV, (o) => (o.spec.customresourcedefinitions.owned[0].name = 'gizmoz.example.com')),
    error: `${CSV}: spec.customresourcedefinitions.owned[0].name: "gizmoz.example.com" does not match the CRD's name "gizmos.example.com" (${CRD})`,
  },
  {
    rule: 'every CRD in the bundle is owned',
    edit: editObject(CSV, (o) => (o.spec.customresourcedefinitions.owned = [])),
    error: `${CRD}: CRD "example.com/v1, Kind=Gizmo" is present in bundle but not defined in CSV`,
  },
  {
    rule: 'no CRD twice',
    edit: (f) => f.set('manifests/example.com_gizmos_copy.yaml', f.get(CRD)!),
    error: `manifests/example.com_gizmos_copy.yaml: duplicate CRD "example.com/v1, Kind=Gizmo" in bundle`,
  },
  {
    rule: 'CRDs are apiextensions.k8s.io/v1',
    edit: editObject(CRD, (o) => (o.apiVersion = 'apiextensions.k8s.io/v2')),
    error: `${CRD}: apiVersion: unsupported api version of CRD: apiextensions.k8s.io/v2`,
  },
  {
    rule: 'a CRD is named plural.group',
    edit: editObject(CRD, (o) => (o.metadata.name = 'gizmo.example.com')),
    error: `${CRD}: metadata.name: must be spec.names.plural+"."+spec.group (gizmos.example.com), got "gizmo.example.com"`,
  },
  {
    rule: 'a CRD has one storage version',
    edit: editObject(CRD, (o) => (o.spec.versions[0].storage = false)),
    error: `${CRD}: spec.versions: must have exactly one version marked as storage version`,
  },
  {
    rule: "the CSV's ServiceAccount is not in the bundle",
    edit: (f) =>
      f.set(
        'manifests/gizmo-operator_v1_serviceaccount.yaml',
        stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'gizmo-operator' } }),
      ),
    error:
      'manifests/gizmo-operator_v1_serviceaccount.yaml: metadata.name: ServiceAccount gizmo-operator is already specified in the CSV (OLM creates it); remove this manifest or rename it',
  },
  {
    rule: 'the bundle fits a ConfigMap',
    edit: (f) =>
      f.set(
        'manifests/big_v1_configmap.yaml',
        // Random bytes do not compress: ~1.1 MB gzipped.
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  noise: ${randomBytes(1_100_000).toString('base64')}\n`,
      ),
    error: '.: maximum bundle compressed size exceeded',
  },
  // removed_apis.go, with the table of removed-apis.ts
  {
    rule: 'a removed API is refused at --kubernetes-version',
    edit: (f) => f.set(PDB_FILE, PDB),
    options: { kubernetesVersion: '1.25' },
    error: `${PDB_FILE}: apiVersion: policy/v1beta1 PodDisruptionBudget gizmo-pdb: policy/v1beta1 PodDisruptionBudget is not served by Kubernetes 1.25 (removed in 1.25); use policy/v1`,
  },
  {
    rule: 'a removed API is refused at the CSV’s minKubeVersion',
    edit: (f) => f.set(PDB_FILE, PDB),
    error: `${PDB_FILE}: apiVersion: policy/v1beta1 PodDisruptionBudget gizmo-pdb: policy/v1beta1 PodDisruptionBudget is not served by Kubernetes 1.25 (removed in 1.25); use policy/v1`,
  },
  {
    rule: 'a deprecated API warns',
    edit: (f) => f.set(PDB_FILE, PDB),
    options: { kubernetesVersion: '1.23' },
    warning: `${PDB_FILE}: apiVersion: policy/v1beta1 PodDisruptionBudget gizmo-pdb: policy/v1beta1 PodDisruptionBudget is deprecated and removed in Kubernetes 1.25; use policy/v1`,
  },
  {
    rule: 'with no target version, a removed API warns',
    edit: (f) => {
      f.set(PDB_FILE, PDB);
      editObject(CSV, (o) => delete o.spec.minKubeVersion)(f);
    },
    warning: `${PDB_FILE}: apiVersion: policy/v1beta1 PodDisruptionBudget is removed in Kubernetes 1.25; use policy/v1`,
  },
  {
    rule: '--kubernetes-version is a version',
    edit: () => undefined,
    options: { kubernetesVersion: 'one.thirty' },
    error: '.: --kubernetes-version "one.thirty" is not a Kubernetes version such as 1.30',
  },
];

describe('validateBundle', () => {
  test('a generated bundle has no error and no warning', () => {
    assert.deepEqual(lines(valid), { errors: [], warnings: [] });
  });

  for (const c of CASES) {
    test(`rule: ${c.rule}`, () => {
      const { errors, warnings } = lines(broken(c.edit), c.options);
      if (c.error) {
        assert.ok(
          errors.some((e) => e === c.error || (c.error!.startsWith('.:') && e.startsWith(c.error!))),
          `expected error\n  ${c.error}\ngot\n  ${errors.join('\n  ')}`,
        );
      } else {
        assert.deepEqual(errors, [], 'a warning-only rule raises no error');
        assert.ok(warnings.includes(c.warning!), `expected warning\n  ${c.warning}\ngot\n  ${warnings.join('\n  ')}`);
      }
    });
  }
});
