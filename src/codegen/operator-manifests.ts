/**
 * The objects that run the operator: its Namespace, ServiceAccount, a Deployment with the hardened
 * securityContext (non-root uid 65532, read-only root filesystem, no capabilities, RuntimeDefault
 * seccomp, no privilege escalation) and health probes, a Service for /metrics and a NetworkPolicy
 * that admits only the metrics scrape. Pure functions of the project config.
 */
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { Namespace, ResourceRequirements, Service, ServiceAccount } from 'kubernetes-types/core/v1.js';
import type { NetworkPolicy } from 'kubernetes-types/networking/v1.js';
import type { OperatorProjectConfig } from './config.js';

/** The uid/gid the operator runs as (distroless "nonroot"); the Dockerfile's USER is the same. */
export const NONROOT_UID = 65532;
export const DEFAULT_METRICS_PORT = 8080;
export const DEFAULT_HEALTH_PORT = 8081;
export const DEFAULT_REPLICAS = 1;
/** Above the manager's 30 s graceful shutdown, so in-flight reconciles drain before SIGKILL. */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 45;
export const DEFAULT_RESOURCES: ResourceRequirements = { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '256Mi' } };
/** Namespaces with this label may scrape the operator's metrics (as kubebuilder's default policy). */
export const METRICS_NAMESPACE_LABEL = 'metrics';

const nameLabel = (config: OperatorProjectConfig) => ({ 'app.kubernetes.io/name': config.name });

export function namespaceManifest(config: OperatorProjectConfig): Namespace {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.namespace, labels: nameLabel(config) } };
}

export function serviceAccountManifest(config: OperatorProjectConfig): ServiceAccount {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: config.name, namespace: config.namespace, labels: nameLabel(config) } };
}

export function deploymentManifest(config: OperatorProjectConfig): Deployment {
  const d = config.deployment ?? {};
  const labels = nameLabel(config);
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
          securityContext: { runAsNonRoot: true, runAsUser: NONROOT_UID, runAsGroup: NONROOT_UID, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'operator',
              image: config.image,
              ...(d.env?.length ? { env: [...d.env] } : {}),
              ports: [
                { name: 'metrics', containerPort: d.metricsPort ?? DEFAULT_METRICS_PORT },
                { name: 'health', containerPort: d.healthPort ?? DEFAULT_HEALTH_PORT },
              ],
              livenessProbe: { httpGet: { path: '/healthz', port: 'health' }, initialDelaySeconds: 5, periodSeconds: 10 },
              readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5 },
              resources: d.resources ?? DEFAULT_RESOURCES,
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
            },
          ],
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
    spec: { selector: nameLabel(config), ports: [{ name: 'metrics', port: config.deployment?.metricsPort ?? DEFAULT_METRICS_PORT, targetPort: 'metrics', protocol: 'TCP' }] },
  };
}

export function networkPolicyManifest(config: OperatorProjectConfig): NetworkPolicy {
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
export function operatorManifests(config: OperatorProjectConfig): object[] {
  return [namespaceManifest(config), serviceAccountManifest(config), deploymentManifest(config), metricsServiceManifest(config), networkPolicyManifest(config)];
}

/** What deployment.yaml says about itself, under the generated-file header. */
export function operatorManifestsComment(config: OperatorProjectConfig): string[] {
  const metricsPort = config.deployment?.metricsPort ?? DEFAULT_METRICS_PORT;
  return [
    `The operator's Namespace, ServiceAccount and Deployment (uid ${NONROOT_UID}, read-only root filesystem, no`,
    'capabilities, RuntimeDefault seccomp, probes on /healthz and /readyz), a Service for /metrics on port',
    `${metricsPort}, and a NetworkPolicy that admits only that port, from namespaces labelled ${METRICS_NAMESPACE_LABEL}=enabled`,
    "(traffic from the pod's own node, such as kubelet probes, is always allowed).",
  ];
}
