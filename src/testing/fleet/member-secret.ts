/**
 * A fleet member's kubeconfig as a v1 Secret for the host cluster, shaped for the
 * `kubeconfigSecrets` cluster provider: its default selector, data key and cluster-name annotation.
 * The constants repeat the provider's defaults (`DEFAULT_KUBECONFIG_SECRET_SELECTOR`,
 * `DEFAULT_KUBECONFIG_SECRET_KEY`, `CLUSTER_NAME_ANNOTATION`) so the kit does not depend on a
 * provider; keep them equal.
 */
import { stringify as toYaml } from 'yaml';
import type { KubeconfigObject } from '../control-plane/test-env.js';

/** The label that selects member Secrets (`kubeconfigSecrets`'s default selector is `<label>=true`). */
export const FLEET_MEMBER_LABEL = 'operator-runtime.io/fleet-member';
/** The data key holding the kubeconfig. */
export const DEFAULT_MEMBER_SECRET_KEY = 'kubeconfig';
/** Names the member cluster, so the Secret's own name is free. */
export const MEMBER_CLUSTER_NAME_ANNOTATION = 'operator-runtime.io/cluster-name';

export interface MemberSecretOptions {
  /** The host namespace the provider watches. */
  readonly namespace: string;
  /** @defaultValue `<member>-kubeconfig` */
  readonly name?: string;
  /** Added to `{ [FLEET_MEMBER_LABEL]: 'true' }`; given keys win (set the label to something else to hide it). */
  readonly labels?: Readonly<Record<string, string>>;
  /** @defaultValue {@link DEFAULT_MEMBER_SECRET_KEY} */
  readonly key?: string;
}

/** The v1 Secret manifest (data base64-encoded, as the API stores it). */
export interface MemberSecretManifest {
  readonly apiVersion: 'v1';
  readonly kind: 'Secret';
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  };
  readonly type: 'Opaque';
  readonly data: Readonly<Record<string, string>>;
}

/** The manifest of a Secret carrying `kubeconfig` for the member `cluster`. */
export function memberSecretManifest(
  cluster: string,
  kubeconfig: KubeconfigObject,
  options: MemberSecretOptions,
): MemberSecretManifest {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: options.name ?? `${cluster}-kubeconfig`,
      namespace: options.namespace,
      labels: { [FLEET_MEMBER_LABEL]: 'true', ...options.labels },
      annotations: { [MEMBER_CLUSTER_NAME_ANNOTATION]: cluster },
    },
    type: 'Opaque',
    data: { [options.key ?? DEFAULT_MEMBER_SECRET_KEY]: Buffer.from(toYaml(kubeconfig)).toString('base64') },
  };
}
