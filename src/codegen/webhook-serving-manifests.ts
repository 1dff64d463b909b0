/**
 * What a manager with webhooks needs in the cluster besides the Validating/Mutating
 * WebhookConfigurations (operator-runtime/webhook): a Service in front of the webhook port, and a
 * serving certificate from cert-manager (a self-signed Issuer and a Certificate whose Secret the
 * Deployment mounts). cert-manager's CA injector fills the configurations' and CRDs' `caBundle`
 * from that Certificate, so the base carries no key material. cert-manager must be installed.
 */
import type { Service } from 'kubernetes-types/core/v1.js';
import type { OperatorProjectConfig } from './config.js';
import { DEFAULT_WEBHOOK_PORT, webhookCertSecretName } from './operator-manifests.js';

/** The Service the API server calls; port 443 as Kubernetes assumes for a webhook Service. */
export const WEBHOOK_SERVICE_PORT = 443;

export const webhookServiceName = (config: OperatorProjectConfig) => `${config.name}-webhook`;
export const servingCertificateName = (config: OperatorProjectConfig) => `${config.name}-serving-cert`;

/** Where the API server reaches the webhooks, and which Certificate's CA it trusts (for webhookManifests/webhookConversion). */
export function webhookClientOptions(config: OperatorProjectConfig): { service: { name: string; namespace: string; port: number }; certManagerCertificate: string } {
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
    spec: { selector: labels, ports: [{ name: 'webhook', port: WEBHOOK_SERVICE_PORT, targetPort: config.deployment?.webhookPort ?? DEFAULT_WEBHOOK_PORT, protocol: 'TCP' }] },
  };
}

/** cert-manager's self-signed Issuer and the serving Certificate for the webhook Service's DNS names. */
export function servingCertificateManifests(config: OperatorProjectConfig): object[] {
  const issuer = `${config.name}-selfsigned`;
  const service = `${webhookServiceName(config)}.${config.namespace}.svc`;
  return [
    { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: issuer, namespace: config.namespace }, spec: { selfSigned: {} } },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: servingCertificateName(config), namespace: config.namespace },
      spec: { dnsNames: [service, `${service}.cluster.local`], issuerRef: { kind: 'Issuer', name: issuer }, secretName: webhookCertSecretName(config) },
    },
  ];
}
