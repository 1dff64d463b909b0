/**
 * The objects that run the operator: its Namespace, ServiceAccount, a Deployment with the hardened
 * securityContext (non-root uid 65532, read-only root filesystem, no capabilities, RuntimeDefault
 * seccomp, no privilege escalation) and health probes, a Service for /metrics and a NetworkPolicy
 * that admits only the metrics scrape. Pure functions of the project config.
 */
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { Namespace, ResourceRequirements, Service, ServiceAccount } from 'kubernetes-types/core/v1.js';
import type { NetworkPolicy } from 'kubernetes-types/networking/v1.js';
import { DEFAULT_HEALTH_PORT, DEFAULT_METRICS_PORT } from '../manager/endpoints.js';
import { DEFAULT_WEBHOOK_PORT } from '../webhook/webhook-server.js';
import { DEFAULT_WEBHOOK_CERT_DIR, type OperatorProjectConfig } from './config.js';

/** The uid/gid the operator runs as (distroless "nonroot"); the Dockerfile's USER is the same. */
export const NONROOT_UID = 65532;
export const DEFAULT_REPLICAS = 1;
/** Above the manager's 30 s graceful shutdown, so in-flight reconciles drain before SIGKILL. */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 45;
export const DEFAULT_RESOURCES: ResourceRequirements = {
  requests: { cpu: '50m', memory: '96Mi' },
  limits: { memory: '256Mi' },
};
/** Namespaces with this label may scrape the operator's metrics (as kubebuilder's default policy). */
export const METRICS_NAMESPACE_LABEL = 'metrics';

/** What the manager serves besides metrics and health, as the generators found it. */
export interface OperatorFeatures {
  /** Admission or conversion webhooks are registered: the Deployment serves them with the cert-manager Secret. */
  readonly webhooks: boolean;
}

const nameLabel = (config: OperatorProjectConfig) => ({ 'app.kubernetes.io/name': config.name });

/** The Secret cert-manager writes the webhook serving certificate to. */
export const webhookCertSecretName = (config: OperatorProjectConfig) => `${config.name}-webhook-server-cert`;
const webhookPort = (config: OperatorProjectConfig) => config.deployment?.webhookPort ?? DEFAULT_WEBHOOK_PORT;

export function namespaceManifest(config: OperatorProjectConfig): Namespace {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.namespace, labels: nameLabel(config) } };
}

export function serviceAccountManifest(config: OperatorProjectConfig): ServiceAccount {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: config.name, namespace: config.namespace, labels: nameLabel(config) },
  };
}

export function deploymentManifest(config: OperatorProjectConfig, features: OperatorFeatures): Deployment {
  const d = config.deployment ?? {};
  const labels = nameLabel(config);
  // OLM's name for the serving-certificate volume: installing the bundle, OLM replaces a volume of
  // this name with its own certificate (operator-lifecycle-manager pkg/controller/install/certresources.go,
  // addCertVolumeAndVolumeMount), so the CSV can carry this very Deployment.
  const webhookVolume = 'webhook-cert';
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: config.name, namespace: config.namespace, labels },
    spec: {
      replicas: d.replicas ?? DEFAULT_REPLICAS,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: config.name,
          terminationGracePeriodSeconds: d.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: NONROOT_UID,
            runAsGroup: NONROOT_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'operator',
              image: config.image,
              ...(d.env?.length ? { env: [...d.env] } : {}),
              ports: [
                { name: 'metrics', containerPort: d.metricsPort ?? DEFAULT_METRICS_PORT },
                { name: 'health', containerPort: d.healthPort ?? DEFAULT_HEALTH_PORT },
                ...(features.webhooks ? [{ name: 'webhook', containerPort: webhookPort(config) }] : []),
              ],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'health' },
                initialDelaySeconds: 5,
                periodSeconds: 10,
              },
              readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5 },
              resources: d.resources ?? DEFAULT_RESOURCES,
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              ...(features.webhooks
                ? {
                    volumeMounts: [
                      { name: webhookVolume, mountPath: d.webhookCertDir ?? DEFAULT_WEBHOOK_CERT_DIR, readOnly: true },
                    ],
                  }
                : {}),
            },
          ],
          ...(features.webhooks
            ? { volumes: [{ name: webhookVolume, secret: { secretName: webhookCertSecretName(config) } }] }
            : {}),
        },
      },
    },
  };
}

export function metricsServiceManifest(config: OperatorProjectConfig): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `${config.name}-metrics`, namespace: config.namespace, labels: nameLabel(config) },
    spec: {
      selector: nameLabel(config),
      ports: [
        {
          name: 'metrics',
          port: config.deployment?.metricsPort ?? DEFAULT_METRICS_PORT,
          targetPort: 'metrics',
          protocol: 'TCP',
        },
      ],
    },
  };
}

export function networkPolicyManifest(config: OperatorProjectConfig, _features: OperatorFeatures): NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: `${config.name}-allow-metrics`, namespace: config.namespace, labels: nameLabel(config) },
    spec: {
      podSelector: { matchLabels: nameLabel(config) },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { [METRICS_NAMESPACE_LABEL]: 'enabled' } } }],
          ports: [{ port: config.deployment?.metricsPort ?? DEFAULT_METRICS_PORT, protocol: 'TCP' }],
        },
      ],
    },
  };
}

/** Everything `deployment.yaml` holds, in apply order. */
export function operatorManifests(config: OperatorProjectConfig, features: OperatorFeatures): object[] {
  return [
    namespaceManifest(config),
    serviceAccountManifest(config),
    deploymentManifest(config, features),
    metricsServiceManifest(config),
    networkPolicyManifest(config, features),
  ];
}

/** What deployment.yaml says about itself, under the generated-file header. */
export function operatorManifestsComment(config: OperatorProjectConfig, features: OperatorFeatures): string[] {
  const metricsPort = config.deployment?.metricsPort ?? DEFAULT_METRICS_PORT;
  return [
    `The operator's Namespace, ServiceAccount and Deployment (uid ${NONROOT_UID}, read-only root filesystem, no`,
    'capabilities, RuntimeDefault seccomp, probes on /healthz and /readyz), a Service for /metrics on port',
    `${metricsPort}, and a NetworkPolicy that admits only that port, from namespaces labelled ${METRICS_NAMESPACE_LABEL}=enabled`,
    ...(features.webhooks ? [`(the webhook port ${webhookPort(config)} has its own policy, in webhooks.yaml),`] : []),
    "(traffic from the pod's own node, such as kubelet probes, is always allowed).",
  ];
}
