/**
 * The handlers an operator registers, one per path. The manager holds one `Webhooks` (as
 * `manager.webhooks`): its webhook server serves them, and `webhookManifests` turns the same
 * registrations into Validating/MutatingWebhookConfigurations and CRD conversion stanzas, so the
 * cluster's configuration is never written by hand.
 */
import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../core/object-key.js';
import { WebhookRegistrationError } from './errors.js';
import type {
  AdmissionWebhookOptions,
  ConversionOptions,
  MutateFunction,
  Spoke,
  ValidateFunction,
} from './handlers.js';
import { kindResource, splitApiVersion, type KindResource } from './kind-resource.js';

/** controller-runtime's path for the conversion webhook of every kind. */
export const CONVERSION_PATH = '/convert';

export interface AdmissionRegistration {
  readonly type: 'validating' | 'mutating';
  readonly path: string;
  readonly name: string;
  readonly target: KindResource;
  readonly options: AdmissionWebhookOptions;
  // The handlers take the kind's type; stored erased, the server hands them objects of that kind.
  readonly validate?: ValidateFunction<KubeObject>;
  readonly mutate?: MutateFunction<KubeObject>;
}

export interface ConversionRegistration {
  readonly group: string;
  readonly kind: string;
  readonly hubVersion: string;
  /** Spoke by version. */
  readonly spokes: ReadonlyMap<string, Spoke<KubeObject>>;
}

export class Webhooks {
  private readonly admission = new Map<string, AdmissionRegistration>();
  private readonly conversion = new Map<string, ConversionRegistration>();

  /** Validates writes of `kind` (CREATE and UPDATE unless `options.operations` says otherwise). */
  validate<T extends KubeObject>(kind: Kind<T>, fn: ValidateFunction<T>, options: AdmissionWebhookOptions = {}): void {
    // Only objects of `kind` reach `fn` (the server checks each request's kind first).
    this.addAdmission('validating', kind, { validate: fn as unknown as ValidateFunction<KubeObject> }, options);
  }

  /** Defaults or rewrites writes of `kind`: `fn` returns the object to store. */
  mutate<T extends KubeObject>(kind: Kind<T>, fn: MutateFunction<T>, options: AdmissionWebhookOptions = {}): void {
    this.addAdmission('mutating', kind, { mutate: fn as unknown as MutateFunction<KubeObject> }, options);
  }

  /**
   * Converts `kind`'s custom resources between versions through the hub (CRD `conversion.strategy:
   * Webhook`, served at {@link CONVERSION_PATH}). `kind` may be any version of the CRD.
   */
  convert<H extends KubeObject>(kind: Kind<KubeObject>, conversion: ConversionOptions<H>): void {
    const { group } = splitApiVersion(kind.apiVersion);
    const key = `${kind.kind}.${group}`;
    if (this.conversion.has(key)) throw new WebhookRegistrationError(`a conversion for ${key} is already registered`);
    const hub = splitApiVersion(conversion.hub.apiVersion);
    if (hub.group !== group || conversion.hub.kind !== kind.kind)
      throw new WebhookRegistrationError(
        `conversion hub ${conversion.hub.apiVersion}/${conversion.hub.kind} is not a version of ${key}`,
      );
    const spokes = new Map<string, Spoke<KubeObject>>();
    for (const s of conversion.spokes) {
      const v = splitApiVersion(s.kind.apiVersion);
      if (v.group !== group || s.kind.kind !== kind.kind)
        throw new WebhookRegistrationError(
          `conversion spoke ${s.kind.apiVersion}/${s.kind.kind} is not a version of ${key}`,
        );
      if (v.version === hub.version || spokes.has(v.version))
        throw new WebhookRegistrationError(`conversion for ${key}: version ${v.version} is given twice`);
      // The hub's type is H; the server only hands hub-version objects to fromHub.
      spokes.set(v.version, s as unknown as Spoke<KubeObject>);
    }
    this.conversion.set(key, { group, kind: kind.kind, hubVersion: hub.version, spokes });
  }

  /** Every admission webhook, in registration order. */
  admissionWebhooks(): readonly AdmissionRegistration[] {
    return [...this.admission.values()];
  }

  admissionAt(path: string): AdmissionRegistration | undefined {
    return this.admission.get(path);
  }

  conversions(): readonly ConversionRegistration[] {
    return [...this.conversion.values()];
  }

  /** The conversion registered for a CRD's group and kind. */
  conversionFor(group: string, kind: string): ConversionRegistration | undefined {
    return this.conversion.get(`${kind}.${group}`);
  }

  /** Whether anything is registered (the manager then needs its `webhook` options). */
  get size(): number {
    return this.admission.size + this.conversion.size;
  }

  private addAdmission(
    type: 'validating' | 'mutating',
    kind: Kind<KubeObject>,
    handler: Pick<AdmissionRegistration, 'validate' | 'mutate'>,
    options: AdmissionWebhookOptions,
  ): void {
    const target = kindResource(kind, options);
    const prefix = type === 'validating' ? 'validate' : 'mutate';
    const path =
      options.path ??
      `/${prefix}-${target.group.replaceAll('.', '-') || 'core'}-${target.version}-${target.kind.toLowerCase()}`;
    if (!path.startsWith('/') || path === CONVERSION_PATH)
      throw new WebhookRegistrationError(`webhook path ${path} must start with / and not be ${CONVERSION_PATH}`);
    if (this.admission.has(path)) throw new WebhookRegistrationError(`a webhook is already registered at ${path}`);
    const name = options.name ?? `${prefix[0]}${target.kind.toLowerCase()}.${target.group || 'core.k8s.io'}`;
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?){2,}$/.test(name)) {
      throw new WebhookRegistrationError(
        `webhook name ${name} must be a fully qualified domain name with at least three segments (e.g. vdatabase.example.com)`,
      );
    }
    const ops = options.operations ?? [];
    if (ops.some((o) => !['CREATE', 'UPDATE', 'DELETE'].includes(o)))
      throw new WebhookRegistrationError(`webhook ${path}: operations must be CREATE, UPDATE or DELETE`);
    if (type === 'mutating' && ops.includes('DELETE'))
      throw new WebhookRegistrationError(`webhook ${path}: a mutator cannot change a DELETE (validate it instead)`);
    if (
      options.timeoutSeconds !== undefined &&
      !(Number.isInteger(options.timeoutSeconds) && options.timeoutSeconds >= 1 && options.timeoutSeconds <= 30)
    ) {
      throw new WebhookRegistrationError(`webhook ${path}: timeoutSeconds must be an integer from 1 to 30`);
    }
    this.admission.set(path, { type, path, name, target, options, ...handler });
  }
}
