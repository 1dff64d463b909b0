/**
 * The cluster-side configuration of the registered webhooks, generated from the registrations so
 * it cannot drift from the code: Validating/MutatingWebhookConfigurations (rules from each kind's
 * group, version and plural; sideEffects None; admissionReviewVersions v1) and a CRD's
 * `conversion` stanza (strategy Webhook, conversionReviewVersions v1). The API server reaches the
 * webhook through a Service (in a cluster) or a URL (TestEnv, local runs) and trusts it through
 * `caBundle` or, in a Kustomize base, through cert-manager's CA injector.
 */
import type {
  MutatingWebhook,
  MutatingWebhookConfiguration,
  RuleWithOperations,
  ValidatingWebhook,
  ValidatingWebhookConfiguration,
  WebhookClientConfig,
} from 'kubernetes-types/admissionregistration/v1.js';
import type { CustomResourceConversion } from 'kubernetes-types/apiextensions/v1.js';
import type { ResourceType } from '../client/discovery.js';
import { InvalidOptionError } from '../core/errors.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { DEFAULT_WEBHOOK_TIMEOUT_SECONDS, type FailurePolicy } from './handlers.js';
import type { LabelSelectorObject } from '../cache/label-selector.js';
import { splitApiVersion } from './kind-resource.js';
import { CONVERSION_PATH, type AdmissionRegistration, type Webhooks } from './webhooks.js';

/** cert-manager's CA injector fills `caBundle` of objects annotated with the Certificate it should take the CA from. */
export const CERT_MANAGER_INJECT_CA_ANNOTATION = 'cert-manager.io/inject-ca-from';

/** Anything that holds registrations: a `Manager` (its `webhooks`). */
export interface WebhookSource {
  readonly webhooks: Webhooks;
}

export interface WebhookServiceReference {
  readonly name: string;
  readonly namespace: string;
  /** The Service's port. @defaultValue 443 */
  readonly port?: number;
}

export interface WebhookClientOptions {
  /** The Service in front of the manager's webhook port (in a cluster). Exactly one of `service` and `url`. */
  readonly service?: WebhookServiceReference;
  /** The webhook server's base URL, `https://host:port` (TestEnv, a manager outside the cluster); paths are appended. */
  readonly url?: string;
  /** PEM of the CA (or self-signed certificate) the API server should trust for the webhook. */
  readonly caBundle?: string;
  /**
   * `namespace/name` of the cert-manager Certificate whose CA is injected (annotation
   * {@link CERT_MANAGER_INJECT_CA_ANNOTATION}); for a Kustomize base without a caBundle.
   */
  readonly certManagerCertificate?: string;
}

export interface WebhookManifestOptions extends WebhookClientOptions {
  /** Prefix of the configurations' names: `<name>-validating`, `<name>-mutating`. */
  readonly name: string;
  /** For webhooks that do not set their own. @defaultValue 'Fail' */
  readonly failurePolicy?: FailurePolicy;
  /** For webhooks that do not set their own. @defaultValue {@link DEFAULT_WEBHOOK_TIMEOUT_SECONDS} */
  readonly timeoutSeconds?: number;
  /** For webhooks that do not set their own. @defaultValue every namespace */
  readonly namespaceSelector?: LabelSelectorObject;
  /** Labels on the generated objects. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** kubernetes-types leaves out the fields RuleWithOperations embeds from Rule. */
export interface WebhookRule extends RuleWithOperations {
  resources: string[];
  scope?: 'Namespaced' | 'Cluster' | '*';
}
export type GeneratedValidatingWebhook = Omit<ValidatingWebhook, 'rules'> & { rules: WebhookRule[] };
export type GeneratedMutatingWebhook = Omit<MutatingWebhook, 'rules'> & { rules: WebhookRule[] };
export type GeneratedValidatingWebhookConfiguration = Omit<ValidatingWebhookConfiguration, 'webhooks'> & {
  webhooks: GeneratedValidatingWebhook[];
};
export type GeneratedMutatingWebhookConfiguration = Omit<MutatingWebhookConfiguration, 'webhooks'> & {
  webhooks: GeneratedMutatingWebhook[];
};
export type WebhookConfiguration = GeneratedValidatingWebhookConfiguration | GeneratedMutatingWebhookConfiguration;

function checkClient(options: WebhookClientOptions): void {
  if (Boolean(options.service) === Boolean(options.url))
    throw new InvalidOptionError('webhookManifests', 'give exactly one of service and url');
  if (options.url && !/^https:\/\/[^/?#]+$/.test(options.url))
    throw new InvalidOptionError('url', 'must be https://host:port with no path (webhook paths are appended)');
  if (options.certManagerCertificate && !/^[^/]+\/[^/]+$/.test(options.certManagerCertificate))
    throw new InvalidOptionError('certManagerCertificate', 'must be namespace/name');
}

function clientConfig(options: WebhookClientOptions, path: string): WebhookClientConfig {
  const ca = options.caBundle ? { caBundle: Buffer.from(options.caBundle).toString('base64') } : {};
  if (options.url) return { url: `${options.url}${path}`, ...ca };
  const s = options.service!;
  return { service: { name: s.name, namespace: s.namespace, path, ...omitUndefined({ port: s.port }) }, ...ca };
}

function metadata(
  name: string,
  options: WebhookManifestOptions,
): { name: string; labels?: Record<string, string>; annotations?: Record<string, string> } {
  return {
    name,
    ...(options.labels ? { labels: { ...options.labels } } : {}),
    ...(options.certManagerCertificate
      ? { annotations: { [CERT_MANAGER_INJECT_CA_ANNOTATION]: options.certManagerCertificate } }
      : {}),
  };
}

function webhook(reg: AdmissionRegistration, options: WebhookManifestOptions): GeneratedValidatingWebhook {
  const o = reg.options;
  const namespaceSelector = o.namespaceSelector ?? options.namespaceSelector;
  return {
    name: reg.name,
    clientConfig: clientConfig(options, reg.path),
    rules: [
      {
        apiGroups: [reg.target.group],
        apiVersions: [reg.target.version],
        resources: [reg.target.resource],
        operations: [...(o.operations ?? ['CREATE', 'UPDATE'])],
        scope: reg.target.scope,
      },
    ],
    failurePolicy: o.failurePolicy ?? options.failurePolicy ?? 'Fail',
    // Requests for another version of the kind are converted to this one and sent too.
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: o.timeoutSeconds ?? options.timeoutSeconds ?? DEFAULT_WEBHOOK_TIMEOUT_SECONDS,
    ...(namespaceSelector
      ? { namespaceSelector: structuredClone(namespaceSelector) as ValidatingWebhook['namespaceSelector'] }
      : {}),
    ...(o.objectSelector
      ? { objectSelector: structuredClone(o.objectSelector) as ValidatingWebhook['objectSelector'] }
      : {}),
  };
}

/**
 * The Validating and Mutating WebhookConfigurations for every admission webhook `source` has
 * registered (one object per type that has any; none when nothing is registered).
 */
export function webhookManifests(source: WebhookSource, options: WebhookManifestOptions): WebhookConfiguration[] {
  checkClient(options);
  const all = source.webhooks.admissionWebhooks();
  const validating = all.filter((w) => w.type === 'validating');
  const mutating = all.filter((w) => w.type === 'mutating');
  const out: WebhookConfiguration[] = [];
  if (validating.length) {
    out.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: metadata(`${options.name}-validating`, options),
      webhooks: validating.map((w) => webhook(w, options)),
    });
  }
  if (mutating.length) {
    out.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: metadata(`${options.name}-mutating`, options),
      webhooks: mutating.map((w) => ({ ...webhook(w, options), reinvocationPolicy: 'Never' })),
    });
  }
  return out;
}

/**
 * The CRD `spec.conversion` for `kind` when a conversion is registered for it (else `undefined`:
 * versions then differ only in apiVersion), for `customResourceDefinition(kind, { conversion })`.
 * With `certManagerCertificate`, also put {@link CERT_MANAGER_INJECT_CA_ANNOTATION} on the CRD.
 */
export function webhookConversion(
  source: WebhookSource,
  kind: ResourceType,
  options: WebhookClientOptions,
): CustomResourceConversion | undefined {
  checkClient(options);
  const { group } = splitApiVersion(kind.apiVersion);
  if (!source.webhooks.conversionFor(group, kind.kind)) return undefined;
  return {
    strategy: 'Webhook',
    webhook: { clientConfig: clientConfig(options, CONVERSION_PATH), conversionReviewVersions: ['v1'] },
  };
}
