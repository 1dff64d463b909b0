/**
 * The declaration part every controller builder shares (`ControllerBuilder` for the host cluster,
 * `FleetControllerBuilder` for member clusters): the primary kind, owned and watched kinds, event
 * filters, declared writes and options, recorded as a `ControllerDescription`. Subclasses add what
 * only they have (`reconcileOn`) and their own `complete()`, which builds from the description.
 */
import type { ResourceType } from '../client/discovery.js';
import type { Kind } from '../client/kind.js';
import { InvalidOptionError } from '../core/errors.js';
import type { KubeObject } from '../core/object-key.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { MapFunction } from './enqueue-handlers.js';
import { DEFAULT_PRIMARY_PREDICATE, type Predicate } from './predicates.js';
import type { WriteVerb } from '../rbac/permission.js';
import type {
  ControllerBuilderOptions,
  ControllerDescription,
  ControllerSource,
  WriteDeclaration,
} from './controller-description.js';
import type { TriggerKey } from './trigger-source.js';

export interface ControllerWatchOptions<T = KubeObject> {
  /** All must pass for an event to enqueue. `for()` defaults to ignoring status-only updates. */
  readonly predicates?: readonly Predicate<T>[];
}

/** What `writes()` may declare besides the verbs. */
export interface ControllerWritesOptions {
  /** The subresource written, e.g. `status` for `patchStatus`/`updateStatus`. @defaultValue the object itself */
  readonly subresource?: string;
}

const WRITE_VERBS: readonly WriteVerb[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];

export abstract class ControllerDeclaration {
  protected primary: ResourceType | undefined;
  protected readonly sources: ControllerSource[] = [];
  protected readonly eventFilters: Predicate[] = [];
  protected readonly triggers: AsyncIterable<TriggerKey>[] = [];
  protected readonly writeDeclarations: WriteDeclaration[] = [];
  protected options: ControllerBuilderOptions = {};
  private completed = false;

  constructor(protected name: string) {
    if (!name) throw new InvalidOptionError('name', 'a controller needs a name');
  }

  /** Renames the controller (its metrics, logs and runnable carry the name). */
  named(name: string): this {
    if (!name) throw new InvalidOptionError('name', 'a controller needs a name');
    this.name = name;
    return this;
  }

  /** A kind this controller creates and controls: its events requeue the controlling owner. Its predicates receive `O`. */
  owns<O extends KubeObject = KubeObject>(type: Kind<O>, options: ControllerWatchOptions<O> = {}): this {
    this.sources.push({ type, declaredBy: 'owns', predicates: (options.predicates ?? []) as readonly Predicate[] });
    return this;
  }

  /** Another kind, mapped to keys by `map`; `map` and the predicates receive `W`. */
  watches<W extends KubeObject = KubeObject>(
    type: Kind<W>,
    map: MapFunction<W>,
    options: ControllerWatchOptions<W> = {},
  ): this {
    this.sources.push({
      type,
      declaredBy: 'watches',
      predicates: (options.predicates ?? []) as readonly Predicate[],
      map: map as MapFunction<KubeObject>,
    });
    return this;
  }

  /**
   * Declares writes the reconciler makes, for RBAC (kubebuilder's `+kubebuilder:rbac` markers):
   * `.writes(kinds.Secret, ['create'])`, `.writes(DATABASE, ['patch'], { subresource: 'status' })`.
   * Reads need no declaration: `for`/`owns`/`watches` already give list and watch, and the
   * manager's client answers reads of those kinds from the cache. Calls accumulate.
   */
  writes(type: ResourceType, verbs: readonly WriteVerb[], options: ControllerWritesOptions = {}): this {
    if (verbs.length === 0)
      throw new InvalidOptionError('writes', `controller ${this.name}: no verbs for ${type.kind}`);
    const unknown = verbs.filter((v) => !WRITE_VERBS.includes(v));
    if (unknown.length > 0)
      throw new InvalidOptionError(
        'writes',
        `controller ${this.name}: ${unknown.join(', ')} on ${type.kind} is not a write verb (one of ${WRITE_VERBS.join(', ')})`,
      );
    if (options.subresource !== undefined && !/^[a-z][a-z0-9]*$/.test(options.subresource)) {
      throw new InvalidOptionError(
        'writes',
        `controller ${this.name}: subresource ${JSON.stringify(options.subresource)} is not a name like "status"`,
      );
    }
    this.writeDeclarations.push({ type, verbs: [...verbs], ...omitUndefined({ subresource: options.subresource }) });
    return this;
  }

  /**
   * A filter every event of every kind source (`for`, `owns`, `watches`) must pass, besides the
   * source's own predicates (controller-runtime's `WithEventFilter`). Calls accumulate (all must pass).
   */
  withEventFilter(predicate: Predicate): this {
    this.eventFilters.push(predicate);
    return this;
  }

  withOptions(options: ControllerBuilderOptions): this {
    this.options = { ...this.options, ...options };
    return this;
  }

  /** Records the primary kind; each subclass's `for()` calls it and returns itself typed by the kind. */
  protected declareFor(type: ResourceType, options: ControllerWatchOptions<never>): void {
    if (this.primary) throw new InvalidOptionError('for', `controller ${this.name} already has a primary kind`);
    this.primary = type;
    // The informer of `type` only ever hands these predicates objects of that kind.
    this.sources.push({
      type,
      declaredBy: 'for',
      predicates: (options.predicates as readonly Predicate[] | undefined) ?? [DEFAULT_PRIMARY_PREDICATE],
    });
  }

  /** The description to build from, once: a second `complete()` throws. */
  protected completeDescription(): ControllerDescription {
    if (!this.primary) throw new InvalidOptionError('for', `controller ${this.name}: call for(kind) before complete()`);
    if (this.completed) throw new InvalidOptionError('complete', `controller ${this.name} is already complete`);
    this.completed = true;
    return this.describe(this.primary);
  }

  /** What was declared, as a plain read-only description (copies: the builder's later calls do not change it). */
  private describe(primary: ResourceType): ControllerDescription {
    return {
      name: this.name,
      primary,
      sources: [...this.sources],
      eventFilters: [...this.eventFilters],
      triggers: [...this.triggers],
      writes: [...this.writeDeclarations],
      options: this.options,
    };
  }
}
