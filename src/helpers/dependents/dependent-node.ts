/**
 * A declared dependent as the runners use it: its spec with the types erased (each was checked
 * against its kind where it was declared), its place in the graph, and the steps both runners share
 * (building the desired object, reading the current one).
 */
import { isNotFound } from '../../client/api-error.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { setControllerReference } from '../owner-references.js';
import { cloneJson, type MetaObject } from '../meta-object.js';
import type { DependentSpec, DependentsClient, DesiredContext, WriteOperation } from './dependent.js';

export interface DependentNode {
  readonly name: string;
  readonly dependsOn: readonly string[];
  /** Everything it depends on, directly or not: what `desired` may read. */
  readonly ancestors: ReadonlySet<string>;
  /** The dependents that depend on it directly: deleted before it. */
  readonly dependents: readonly string[];
  readonly conditionType: string;
  readonly spec: DependentSpec<unknown, MetaObject, string, Record<string, unknown>>;
}

/** What a runner passes down to every dependent. */
export interface RunContext {
  readonly client: DependentsClient;
  readonly fieldManager: string;
  readonly signal?: AbortSignal;
  readonly logger?: Logger;
  /** `ReconcileDependentsOptions.onWrite`, with the types erased. */
  readonly onWrite?: (write: {
    name: string;
    operation: Exclude<WriteOperation, 'unchanged'>;
    object: MetaObject;
  }) => void;
}

/**
 * The desired object of `node`: `desired`'s answer (a copy) with apiVersion and kind filled from the
 * kind; `withOwner` adds the owner reference.
 */
export async function buildDesired(
  node: DependentNode,
  primary: MetaObject,
  objects: ReadonlyMap<string, MetaObject>,
): Promise<MetaObject> {
  const context: DesiredContext<Record<string, unknown>> = {
    dependency: (name) => {
      if (!node.ancestors.has(name))
        throw new InvalidArgumentError(
          `dependent ${node.name} reads ${name}, which it does not depend on: add it to dependsOn`,
        );
      return objects.get(name);
    },
  };
  const built = await node.spec.desired(primary, context);
  const { kind } = node.spec;
  // A copy: what we add must not land in an object `desired` keeps.
  const desired: MetaObject = {
    ...cloneJson(built),
    apiVersion: built.apiVersion ?? kind.apiVersion,
    kind: built.kind ?? kind.kind,
  };
  if (desired.apiVersion !== kind.apiVersion || desired.kind !== kind.kind)
    throw new InvalidArgumentError(
      `dependent ${node.name}: desired returned ${desired.apiVersion} ${desired.kind}, its kind is ${kind.apiVersion} ${kind.kind}`,
    );
  if (!desired.metadata?.name)
    throw new InvalidArgumentError(`dependent ${node.name}: desired returned an object without metadata.name`);
  return desired;
}

/** `desired` with the primary as its controller when the dependent goes with it: changes and returns `desired` (a copy `buildDesired` made). */
export function withOwner(node: DependentNode, primary: MetaObject, desired: MetaObject): MetaObject {
  return (node.spec.onDelete ?? 'delete') === 'delete' ? setControllerReference(primary, desired) : desired;
}

/** The object `desired` names as the client reads it, or undefined when it does not exist. */
export async function readCurrent(
  node: DependentNode,
  desired: MetaObject,
  run: RunContext,
): Promise<MetaObject | undefined> {
  try {
    return await run.client.get<MetaObject>(node.spec.kind, desired.metadata!.name!, {
      namespace: desired.metadata?.namespace,
      signal: run.signal,
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** `kind namespace/name` of an object, for messages. */
export function describeObject(obj: MetaObject): string {
  const ns = obj.metadata?.namespace;
  return `${obj.kind} ${ns ? `${ns}/` : ''}${obj.metadata?.name}`;
}
