/**
 * What a manager with webhooks needs in the cluster besides the Validating/Mutating
 * WebhookConfigurations (operator-runtime/webhook): a Service in front of the webhook port, a
 * NetworkPolicy that admits only the API server's side to that port, and a
 * serving certificate from cert-manager (a self-signed Issuer and a Certificate whose Secret the
 * Deployment mounts). cert-manager's CA injector fills the configurations' and CRDs' `caBundle`
 * from that Certificate, so the base carries no key material. cert-manager must be installed.
 */
import type { Service } from 'kubernetes-types/core/v1.js';
import type { NetworkPolicy, NetworkPolicyPeer } from 'kubernetes-types/networking/v1.js';
import { InvalidOptionError } from '../core/errors.js';
import type { OperatorProjectConfig } from './config.js';
import { DEFAULT_WEBHOOK_PORT } from '../webhook/webhook-server.js';
import { webhookCertSecretName } from './operator-manifests.js';

/** The Service the API server calls; port 443 as Kubernetes assumes for a webhook Service. */
export const WEBHOOK_SERVICE_PORT = 443;

export const webhookServiceName = (config: OperatorProjectConfig) => `${config.name}-webhook`;
export const servingCertificateName = (config: OperatorProjectConfig) => `${config.name}-serving-cert`;

/** Where the API server reaches the webhooks, and which Certificate's CA it trusts (for webhookManifests/webhookConversion). */
export function webhookClientOptions(config: OperatorProjectConfig): {
  service: { name: string; namespace: string; port: number };
  certManagerCertificate: string;
} {
  return {
    service: { name: webhookServiceName(config), namespace: config.namespace, port: WEBHOOK_SERVICE_PORT },
    certManagerCertificate: `${config.namespace}/${servingCertificateName(config)}`,
  };
}

export function webhookServiceManifest(config: OperatorProjectConfig): Service {
  const labels = { 'app.kubernetes.io/name': config.name };
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: webhookServiceName(config), namespace: config.namespace, labels },
    spec: {
      selector: labels,
      ports: [
        {
          name: 'webhook',
          port: WEBHOOK_SERVICE_PORT,
          targetPort: config.deployment?.webhookPort ?? DEFAULT_WEBHOOK_PORT,
          protocol: 'TCP',
        },
      ],
    },
  };
}

/**
 * Who may reach the webhook port when `deployment.webhookIngressFrom` is not set: the private
 * address ranges (RFC 1918, the shared 100.64/10 some providers put their control planes in, IPv6
 * unique-local). The API server calls from an address no pod selector can name — the host network
 * of a control-plane node, a provider's VPC, or a konnectivity agent — so the default cannot be
 * narrower without knowing the cluster; it keeps out every public address. Narrow it to the
 * control plane's CIDR where you know it, and authenticate the API server with the webhook
 * server's `clientCAFile` (the network policy is not an identity).
 */
export const DEFAULT_WEBHOOK_INGRESS_FROM: readonly NetworkPolicyPeer[] = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  'fc00::/7',
].map((cidr) => ({ ipBlock: { cidr } }));

/** A policy of its own for the webhook port (policies add up: the metrics policy stays as it is). */
export function webhookNetworkPolicyManifest(config: OperatorProjectConfig): NetworkPolicy {
  const labels = { 'app.kubernetes.io/name': config.name };
  const from = config.deployment?.webhookIngressFrom ?? DEFAULT_WEBHOOK_INGRESS_FROM;
  // An empty `from` admits every source: the very thing this policy is for keeping out.
  if (from.length === 0)
    throw new InvalidOptionError(
      'config.deployment.webhookIngressFrom',
      'must name at least one source (an empty list admits every source)',
    );
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: `${config.name}-allow-webhook`, namespace: config.namespace, labels },
    spec: {
      podSelector: { matchLabels: labels },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: from.map((p) => structuredClone(p)),
          ports: [{ port: config.deployment?.webhookPort ?? DEFAULT_WEBHOOK_PORT, protocol: 'TCP' }],
        },
      ],
    },
  };
}

/** cert-manager's self-signed Issuer and the serving Certificate for the webhook Service's DNS names. */
export function servingCertificateManifests(config: OperatorProjectConfig): object[] {
  const issuer = `${config.name}-selfsigned`;
  const service = `${webhookServiceName(config)}.${config.namespace}.svc`;
  return [
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: issuer, namespace: config.namespace },
      spec: { selfSigned: {} },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: servingCertificateName(config), namespace: config.namespace },
      spec: {
        dnsNames: [service, `${service}.cluster.local`],
        issuerRef: { kind: 'Issuer', name: issuer },
        secretName: webhookCertSecretName(config),
      },
    },
  ];
}
