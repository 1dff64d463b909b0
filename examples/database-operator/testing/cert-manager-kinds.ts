/**
 * cert-manager's Issuer and Certificate kinds, schema-less: the base's webhook serving certificate
 * needs cert-manager in a cluster; a test's API server needs only its kinds for a server-side dry
 * run to check the rest of the base (manifests.int.test.ts, gitops-overlays.int.test.ts).
 */
const certManagerCrd = (kind: string, plural: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.cert-manager.io` },
  spec: {
    group: 'cert-manager.io',
    names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
});

export const CERT_MANAGER_CRDS = [certManagerCrd('Issuer', 'issuers'), certManagerCrd('Certificate', 'certificates')];
