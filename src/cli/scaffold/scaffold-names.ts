/**
 * The names a scaffold derives from `init <dir> --group --kind --name`, checked once so every
 * template can use them as they are. The operator's name comes from `--name`, else from the folder
 * (as `npm init` does); the kind names only the kind's own files and identifiers. Kinds whose
 * file or identifiers would collide with what the scaffold writes itself are refused here, before
 * anything is written.
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

/**
 * Files the scaffold writes besides the kind's own (`src/<file>.ts`, `src/<file>-reconciler.ts`):
 * a kind whose file base is one of these would overwrite it (`--kind Main` → the process entry).
 */
const GENERATED_SOURCE_FILES: Readonly<Record<string, string>> = { main: 'src/main.ts', operator: 'src/operator.ts' };

/**
 * Identifiers the generated sources declare or import beside the kind's lower-case singular (the
 * reconciler's and the test's local variable): a kind named like one would shadow or redeclare it.
 */
const GENERATED_IDENTIFIERS = new Set([
  'assert',
  'client',
  'eventually',
  'get',
  'kinds',
  'manager',
  'name',
  'namespace',
  'signal',
]);

/** JavaScript's reserved words, which the singular cannot be (`const new = …`). */
const RESERVED_WORDS = new Set(
  'arguments await break case catch class const continue debugger default delete do else enum eval export extends false finally for function if implements import in instanceof interface let new null package private protected public return static super switch this throw true try typeof var void while with yield'.split(
    ' ',
  ),
);

/** Type and constant names the kind's file and reconciler import or declare themselves. */
const GENERATED_TYPES = new Set(['ObjectOf', 'Type']);
const GENERATED_CONSTANTS = new Set(['CONTROLLER_NAME']);

/** Why `kind` cannot be scaffolded, or undefined. */
function kindCollision(kind: string, file: string, singular: string, constant: string): string | undefined {
  const generatedFile = GENERATED_SOURCE_FILES[file];
  if (generatedFile) return `its file src/${file}.ts is ${generatedFile}, which the scaffold writes itself`;
  if (RESERVED_WORDS.has(singular))
    return `its variable name ${JSON.stringify(singular)} is a JavaScript reserved word`;
  if (GENERATED_IDENTIFIERS.has(singular))
    return `its variable name ${JSON.stringify(singular)} is already used by the generated reconciler or test`;
  if (GENERATED_TYPES.has(kind)) return `its type name ${kind} is already imported by the generated sources`;
  if (GENERATED_CONSTANTS.has(constant))
    return `its constant ${constant} is already declared by the generated reconciler`;
  return undefined;
}

/**
 * The operator name a folder gives: its base name in lower case, every run of other characters
 * than letters and digits made one '-' (`My_Operator` → `my-operator`).
 */
export function nameFromFolder(folder: string): string {
  return folder
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export interface ScaffoldNamesOptions {
  readonly group: string;
  readonly kind: string;
  /** The operator's name; derived from `folder` when omitted. */
  readonly name?: string | undefined;
  /** The project folder's base name (e.g. `my-operator` for `init ~/work/my-operator`). */
  readonly folder: string;
}

export function scaffoldNames(options: ScaffoldNamesOptions): ScaffoldNames {
  const { group, kind } = options;
  if (!PASCAL_CASE.test(kind) || kind.length > 63)
    throw new CliUsageError(
      `--kind must be PascalCase letters and digits (e.g. Widget, DatabaseBackup), got ${JSON.stringify(kind)}`,
    );
  if (!DNS_SUBDOMAIN_WITH_DOT.test(group))
    throw new CliUsageError(
      `--group must be a DNS subdomain with a dot (e.g. example.com), got ${JSON.stringify(group)}`,
    );
  const words = kind.split(/(?=[A-Z])/).map((w) => w.toLowerCase());
  const file = words.join('-');
  const singular = words.join('');
  const constant = words.join('_').toUpperCase();
  const collision = kindCollision(kind, file, singular, constant);
  if (collision) throw new CliUsageError(`--kind ${kind} is reserved: ${collision}; choose another kind name`);
  const name = options.name ?? nameFromFolder(options.folder);
  if (options.name === undefined && (!DNS_LABEL.test(name) || name.length > 56)) {
    throw new CliUsageError(
      `cannot derive the operator name from the folder name ${JSON.stringify(options.folder)} (it must give a DNS label of at most 56 characters): pass --name <name>`,
    );
  }
  if (!DNS_LABEL.test(name))
    throw new CliUsageError(
      `--name must be a DNS label (lower-case letters, digits and '-'), got ${JSON.stringify(name)}`,
    );
  if (name.length > 56)
    throw new CliUsageError(
      `--name must be at most 56 characters (its namespace is <name>-system), got ${JSON.stringify(name)}`,
    );
  return {
    name,
    namespace: `${name}-system`,
    group,
    kind,
    plural: pluralOf(singular),
    singular,
    constant,
    file,
    controller: singular,
  };
}
