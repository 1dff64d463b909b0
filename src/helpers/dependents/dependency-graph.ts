/**
 * The dependents' graph checked where it is declared, so a mistake fails at startup with the path
 * that is wrong instead of as a reconcile that never finishes: an unknown dependency, a repeated
 * name, a cycle (named edge by edge). Pure; returns the names in an order where each comes after
 * everything it depends on (declaration order kept among independent ones).
 */
import { InvalidDependentsError } from './invalid-dependents-error.js';

export interface GraphNode {
  readonly name: string;
  readonly dependsOn: readonly string[];
}

const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9-]{0,62}$/;

/** Throws `InvalidDependentsError`; returns the nodes in dependency order. */
export function orderDependents<N extends GraphNode>(primary: string, nodes: readonly N[]): N[] {
  const byName = new Map<string, N>();
  for (const node of nodes) {
    if (!NAME_PATTERN.test(node.name))
      throw new InvalidDependentsError(
        primary,
        `name ${JSON.stringify(node.name)} must start with a letter and hold only letters, digits and dashes (at most 63)`,
      );
    if (byName.has(node.name)) throw new InvalidDependentsError(primary, `${node.name} is declared twice`);
    byName.set(node.name, node);
  }
  for (const node of nodes) {
    for (const dep of node.dependsOn) {
      if (!byName.has(dep))
        throw new InvalidDependentsError(
          primary,
          `${node.name} depends on ${JSON.stringify(dep)}, which is not declared (declared: ${[...byName.keys()].join(', ')})`,
        );
      if (dep === node.name) throw new InvalidDependentsError(primary, `${node.name} depends on itself`);
    }
  }
  // Depth-first: a node on the current path met again closes a cycle, reported from where it starts.
  const ordered: N[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: N): void => {
    if (done.has(node.name)) return;
    const at = path.indexOf(node.name);
    if (at >= 0)
      throw new InvalidDependentsError(primary, `dependency cycle ${[...path.slice(at), node.name].join(' → ')}`);
    path.push(node.name);
    for (const dep of node.dependsOn) visit(byName.get(dep)!);
    path.pop();
    done.add(node.name);
    ordered.push(node);
  };
  for (const node of nodes) visit(node);
  return ordered;
}

/** Every name `name` depends on, directly or through others. */
export function ancestorsOf(nodes: ReadonlyMap<string, GraphNode>, name: string): Set<string> {
  const seen = new Set<string>();
  const stack = [...(nodes.get(name)?.dependsOn ?? [])];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(nodes.get(next)?.dependsOn ?? []));
  }
  return seen;
}
