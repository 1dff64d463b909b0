/**
 * The project config an operator keeps at its root as `operator-runtime.config.ts`: what
 * `operator-runtime generate` needs to write the operator's CRDs, RBAC and Kustomize base. It
 * describes the operator (kinds, manager, image); the generators read it and never start anything.
 */
import type { EnvVar, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import type { NetworkPolicyPeer } from 'kubernetes-types/networking/v1.js';
import type { Manager } from '../manager/manager.js';
import type { AnyCustomKind } from '../crd/custom-kind.js';
import type { BundleConfig } from './bundle/bundle-config.js';
import type { KindConventionAllowance } from '../crd/kind-conventions.js';

/** How the operator's Deployment runs; everything not set here has a hardened default. */
export interface DeploymentConfig {
  /** @defaultValue 1 */
  readonly replicas?: number;
  /** Environment of the operator container, in this order. */
  readonly env?: readonly EnvVar[];
  /** @defaultValue {@link DEFAULT_RESOURCES} */
  readonly resources?: ResourceRequirements;
  /** Seconds Kubernetes waits after SIGTERM; keep it above the manager's graceful shutdown. @defaultValue 45 */
  readonly terminationGracePeriodSeconds?: number;
  /** The manager's plain-HTTP /metrics port (a Service exposes it). @defaultValue 8080 */
  readonly metricsPort?: number;
  /** The manager's /healthz and /readyz port (the probes use it). @defaultValue 8081 */
  readonly healthPort?: number;
  /** The manager's webhook port (`webhook.port`), when it has webhooks. @defaultValue 9443 */
  readonly webhookPort?: number;
  /**
   * Who may reach the webhook port (the generated NetworkPolicy's `from`): the API server's
   * addresses (an `ipBlock` of the control plane's CIDR) or, where it reaches pods through an
   * agent (konnectivity), that agent's namespace and pod selector. docs/webhooks.md explains the
   * choice. @defaultValue {@link DEFAULT_WEBHOOK_INGRESS_FROM}: the private address ranges
   */
  readonly webhookIngressFrom?: readonly NetworkPolicyPeer[];
  /**
   * Where the webhook serving certificate (the cert-manager Secret) is mounted: the manager's
   * `webhook.certDir`. @defaultValue {@link DEFAULT_WEBHOOK_CERT_DIR}
   */
  readonly webhookCertDir?: string;
}

/** An operator project, as `operator-runtime generate` reads it. */
export interface OperatorProjectConfig {
  /** The operator's name (a DNS label): names its ServiceAccount, Deployment, roles and Service. */
  readonly name: string;
  /** The namespace the operator runs in. */
  readonly namespace: string;
  /** The container image, with a version tag (never `:latest`). */
  readonly image: string;
  /** The custom kinds the operator defines (`defineCustomKind`); one CRD each. */
  readonly kinds: readonly AnyCustomKind[];
  /**
   * Builds the operator's Manager with its controllers registered, NOT started, on a client that
   * never connects (`offlineClient()`); RBAC comes from what the controllers declare.
   */
  readonly manager: () => Manager | Promise<Manager>;
  /** Where the Kustomize base goes, relative to the config file. @defaultValue 'config' */
  readonly outDir?: string;
  readonly deployment?: DeploymentConfig;
  /** Comment lines under a generated file's header (what it holds, where its source is). */
  readonly comments?: GeneratedFileComments;
  /** The OLM bundle `operator-runtime generate bundle` writes (package, channels, samples). */
  readonly bundle?: BundleConfig;
  /** The command the generated files name for regenerating them. @defaultValue 'npx operator-runtime generate manifests' */
  readonly regenerate?: string;
  /** What `operator-runtime lint` accepts on purpose; see docs/lint.md. */
  readonly lint?: LintConfig;
}

/** `operator-runtime lint`'s project settings. */
export interface LintConfig {
  /**
   * Custom-kind findings accepted on purpose, each with its reason (enum values that are command
   * names, a float the API must carry): `{ check: 'enum-pascal-case', kind: 'Database', path: '.spec.engine', reason: '…' }`.
   */
  readonly allow?: readonly KindConventionAllowance[];
}

export interface GeneratedFileComments {
  readonly crds?: readonly string[];
  readonly rbac?: readonly string[];
  readonly deployment?: readonly string[];
  readonly webhooks?: readonly string[];
  readonly sharding?: readonly string[];
}

/** kubebuilder's mount point for the webhook serving certificate, which a manager's `webhook.certDir` names. */
export const DEFAULT_WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';

/** Identity function that types an `operator-runtime.config.ts` default export. */
export function defineConfig(config: OperatorProjectConfig): OperatorProjectConfig {
  return config;
}
