/**
 * A dependent resource: an object a primary needs (a Secret, a ConfigMap, a StatefulSet…), declared
 * as data — how its desired state is built from the primary, when it is ready, what it depends on,
 * how it is written and whether it goes when the primary goes. The Java Operator SDK's dependent
 * resources and workflows are the model; `dependentsOf(kind)` (dependents.ts) collects them into a
 * graph that the runtime reconciles in order.
 */
import type { Applier, Creator, Deleter, Getter, Patcher, StatusWriter } from '../../client/contracts.js';
import type { Kind } from '../../client/kind.js';
import type { MetaObject } from '../meta-object.js';

/** The client roles dependents use: read, create, apply, patch (owner references), delete, and status for the conditions. */
export type DependentsClient = Getter & Creator & Applier & Patcher & Deleter & StatusWriter;

/**
 * What happens to a dependent when its primary goes:
 * - `delete`: it carries the primary as its controller (owner reference, so `.owns(kind)` maps its
 *   events back and the garbage collector removes it), and a finalizing primary deletes it in reverse
 *   dependency order (`Dependents.cleanup`).
 * - `keep`: no owner reference; it outlives the primary (a PersistentVolumeClaim with data, a
 *   shared Secret). An owner reference to the primary found on it at cleanup is removed.
 */
export type DeletePolicy = 'delete' | 'keep';

/** What `readyWhen` answers: a boolean, or the verdict with a message for the primary's condition. */
export type ReadyCheck = boolean | { readonly ready: boolean; readonly message?: string };

/** What a write did: `applied` is a server-side apply (the server decides whether anything changed). */
export type WriteOperation = 'created' | 'updated' | 'applied' | 'unchanged';

export interface WriteOutcome<T> {
  readonly operation: WriteOperation;
  /** The object as the server returned it, or as read when nothing was sent. */
  readonly object: T;
}

/** The arguments of a custom write (`write: (args) => …`). */
export interface DependentWriteArgs<T> {
  readonly client: DependentsClient;
  /** What `desired` built, with apiVersion and kind filled in and, for `delete` dependents, the controller reference set. */
  readonly desired: T;
  /** The object as read (through the client: from the cache for a kind the controller owns), or undefined when absent. */
  readonly current: T | undefined;
  readonly fieldManager: string;
  readonly signal?: AbortSignal;
}

/**
 * How a dependent is written:
 * - `apply` (default): server-side apply of the desired object as the fields we own, skipped when
 *   the current object carries the desired object's spec hash (`applyOwned`).
 * - `create`: created when absent, never changed after (a Secret holding a generated password).
 * - a function: anything else (createOrPatch with a `mutate`, an update of a subresource…).
 */
export type WriteStrategy<T> = 'apply' | 'create' | ((args: DependentWriteArgs<T>) => Promise<WriteOutcome<T>>);

/** What `desired` can read besides the primary. */
export interface DesiredContext<D> {
  /**
   * The object a dependent this one depends on (directly or not) was reconciled to, typed from its
   * kind; undefined while cleaning up and that dependent is already gone. Reading one this
   * dependent does not depend on throws: its value would depend on timing.
   */
  dependency<N extends keyof D & string>(name: N): D[N] | undefined;
}

/**
 * One dependent of a primary `P`, whose objects are `T` (from `kind`), named `N`. `D` maps the names
 * declared before it to their object types: `dependsOn` can name only those, so the graph is
 * acyclic by construction in TypeScript (and checked at `build()` for everyone else).
 */
export interface DependentSpec<P, T extends MetaObject, N extends string, D> {
  /** Unique in the graph: letters, digits and dashes, starting with a letter (`configMap`, `statefulset`). */
  readonly name: N;
  readonly kind: Kind<T>;
  /** Reconciled (and ready) before this one, deleted after it. @defaultValue none */
  readonly dependsOn?: readonly (keyof D & string)[];
  /**
   * The desired object, from the primary: name and namespace always; apiVersion and kind are filled
   * from `kind` when left out. Called on every reconcile and at cleanup (to know what to delete),
   * so it must be pure: a random value belongs with `write: 'create'`.
   */
  readonly desired: (primary: P, context: DesiredContext<D>) => T | Promise<T>;
  /**
   * When the object as written or read counts as ready; dependents of a not-ready one wait, and the
   * reconcile asks to come back. @defaultValue always ready
   */
  readonly readyWhen?: (object: T, primary: P) => ReadyCheck;
  /** @defaultValue 'apply' */
  readonly write?: WriteStrategy<T>;
  /** @defaultValue 'delete' */
  readonly onDelete?: DeletePolicy;
  /**
   * The primary's condition that reports this dependent. @defaultValue the name in PascalCase + `Ready`
   * (`configMap` → `ConfigMapReady`)
   */
  readonly conditionType?: string;
}
