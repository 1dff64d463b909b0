/**
 * The names a scaffold derives from `init --group --kind --name`, checked once so every template
 * can use them as they are.
 */
import { CliUsageError } from '../cli-error.js';

export interface ScaffoldNames {
  /** The operator's name, a DNS label: package name, ServiceAccount, Deployment. */
  readonly name: string;
  readonly namespace: string;
  readonly group: string;
  /** PascalCase kind, e.g. `DatabaseBackup`. */
  readonly kind: string;
  /** Lower-case plural, e.g. `databasebackups`. */
  readonly plural: string;
  readonly singular: string;
  /** The kind constant, e.g. `DATABASE_BACKUP`. */
  readonly constant: string;
  /** The kind's file base, e.g. `database-backup`. */
  readonly file: string;
  /** The controller's name, e.g. `databasebackup`. */
  readonly controller: string;
}

const PASCAL_CASE = /^[A-Z][a-z0-9]*(?:[A-Z][a-z0-9]*)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN_WITH_DOT = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

/** English plural of a lower-case word, as kubebuilder forms resource names. */
export function pluralOf(singular: string): string {
  if (/(s|x|z|ch|sh)$/.test(singular)) return `${singular}es`;
  if (/[^aeiou]y$/.test(singular)) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

export function scaffoldNames(options: { readonly group: string; readonly kind: string; readonly name?: string | undefined }): ScaffoldNames {
  const { group, kind } = options;
  if (!PASCAL_CASE.test(kind) || kind.length > 63) throw new CliUsageError(`--kind must be PascalCase letters and digits (e.g. Widget, DatabaseBackup), got ${JSON.stringify(kind)}`);
  if (!DNS_SUBDOMAIN_WITH_DOT.test(group)) throw new CliUsageError(`--group must be a DNS subdomain with a dot (e.g. example.com), got ${JSON.stringify(group)}`);
  const words = kind.split(/(?=[A-Z])/).map((w) => w.toLowerCase());
  const file = words.join('-');
  const name = options.name ?? `${file}-operator`;
  if (!DNS_LABEL.test(name)) throw new CliUsageError(`--name must be a DNS label (lower-case letters, digits and '-'), got ${JSON.stringify(name)}`);
  if (name.length > 56) throw new CliUsageError(`--name must be at most 56 characters (its namespace is <name>-system), got ${JSON.stringify(name)}`);
  const singular = words.join('');
  return { name, namespace: `${name}-system`, group, kind, plural: pluralOf(singular), singular, constant: words.join('_').toUpperCase(), file, controller: singular };
}
