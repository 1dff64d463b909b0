/**
 * What `operator-runtime generate bundle` needs beyond the Kustomize base: the OLM package, channels
 * and the words a catalog shows. Every field has a default, so a project config without `bundle`
 * still yields a bundle that validates.
 */

/** The `bundle` field of `operator-runtime.config.ts`. */
export interface BundleConfig {
  /** The OLM package name (the bundle's `package.v1` annotation, the CSV's name prefix). @defaultValue the config's `name` */
  readonly package?: string;
  /**
   * The operator's version, semver (`spec.version`, CSV name `<package>.v<version>`). The CLI's
   * `--version` wins over it. @defaultValue the `version` of the package.json beside the config
   */
  readonly version?: string;
  /** Channels this bundle is published in. @defaultValue {@link DEFAULT_BUNDLE_CHANNELS} */
  readonly channels?: readonly string[];
  /** The package's default channel. @defaultValue the first of `channels` */
  readonly defaultChannel?: string;
  /** The CSV's `spec.displayName`. @defaultValue the config's `name` in title case */
  readonly displayName?: string;
  /** The CSV's `spec.description` (Markdown). @defaultValue one sentence naming the kinds */
  readonly description?: string;
  readonly provider?: { readonly name: string; readonly url?: string };
  readonly maintainers?: readonly { readonly name: string; readonly email: string }[];
  readonly keywords?: readonly string[];
  /** The CSV's `spec.minKubeVersion`; `validate bundle` checks removed APIs against it. @defaultValue {@link DEFAULT_MIN_KUBE_VERSION} */
  readonly minKubeVersion?: string;
  /** The CSV this one upgrades from (`spec.replaces`, a CSV name). @defaultValue none */
  readonly replaces?: string;
  /**
   * YAML files of sample objects (relative to the config file), the CSV's `alm-examples`.
   * @defaultValue `<outDir>/samples.yaml` when that file exists
   */
  readonly samples?: readonly string[];
  /** Where the bundle goes, relative to the config file. @defaultValue {@link DEFAULT_BUNDLE_DIR} */
  readonly outDir?: string;
}

/** operator-sdk's default channel for a new bundle. */
export const DEFAULT_BUNDLE_CHANNELS: readonly string[] = ['alpha'];
/** The oldest Kubernetes whose API versions the generated manifests are tested against (1.25 to 1.37). */
export const DEFAULT_MIN_KUBE_VERSION = '1.25.0';
export const DEFAULT_BUNDLE_DIR = 'bundle';
/** The samples file read when `bundle.samples` is not set, in the Kustomize base's folder. */
export const DEFAULT_SAMPLES_FILE = 'samples.yaml';
