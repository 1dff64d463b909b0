import { ASTUtils, AST_NODE_TYPES, type TSESLint, type TSESTree } from '@typescript-eslint/utils';
import { createRule } from './create-rule.js';
import { calleeName, hasSpread, keyName, propertyNamed } from './reconcile-scope.js';

/**
 * The builder's `.owns(K)` maps a child's events to its owner through the child's controller
 * reference (`controller: true`), and the garbage collector deletes a child with its owner through
 * the same reference. A create of an owned kind without one leaves an object that outlives its owner
 * and whose changes (a deleted ConfigMap, a drifted Deployment) never reconcile the owner.
 *
 * The rule judges only what the file shows: the kinds named in the builder chain that ends in
 * `.complete(reconciler)`, and the creates in that reconciler (an inline function, or a function,
 * class or object literal declared in the same file) whose object's `kind` it can read.
 */

type Scope = TSESLint.Scope.Scope;

/** How deep the rule follows identifiers to their declarations (`const A = B; const B = kinds.X`). */
const MAX_RESOLVE_DEPTH = 4;

/** What the rule knows of an object a reconcile creates. */
interface CreatedObject {
  /** Its `kind`, when the file spells it. */
  readonly kind: string | undefined;
  /** Whether it carries an owner reference: `unknown` when the file does not show it. */
  readonly referenced: boolean | 'unknown';
}

const UNKNOWN: CreatedObject = { kind: undefined, referenced: 'unknown' };

function unwrap(node: TSESTree.Node): TSESTree.Node {
  let at = node;
  while (
    at.type === AST_NODE_TYPES.TSAsExpression ||
    at.type === AST_NODE_TYPES.TSSatisfiesExpression ||
    at.type === AST_NODE_TYPES.TSNonNullExpression ||
    at.type === AST_NODE_TYPES.TSTypeAssertion
  )
    at = at.expression;
  return at;
}

/** The variable an identifier names, looked up from the identifier's own scope. */
function variableOf(id: TSESTree.Identifier, scopeOf: (node: TSESTree.Node) => Scope) {
  return ASTUtils.findVariable(scopeOf(id), id.name) ?? undefined;
}

/** The initializer of the `const`/`let` an identifier names, or its class or function declaration. */
function declarationOf(id: TSESTree.Identifier, scopeOf: (node: TSESTree.Node) => Scope): TSESTree.Node | undefined {
  const def = variableOf(id, scopeOf)?.defs[0];
  if (def === undefined) return undefined;
  if (def.node.type === AST_NODE_TYPES.VariableDeclarator)
    return def.node.id.type === AST_NODE_TYPES.Identifier ? (def.node.init ?? undefined) : undefined;
  if (def.node.type === AST_NODE_TYPES.ClassDeclaration || def.node.type === AST_NODE_TYPES.FunctionDeclaration)
    return def.node;
  return undefined;
}

/** The kind name a kind expression stands for: `kinds.ConfigMap`, `defineCustomKind({ names: { kind } })`, `kind('v1', 'Secret')`… */
function kindNameOf(node: TSESTree.Node, scopeOf: (node: TSESTree.Node) => Scope, depth = 0): string | undefined {
  if (depth > MAX_RESOLVE_DEPTH) return undefined;
  const at = unwrap(node);
  if (at.type === AST_NODE_TYPES.MemberExpression && !at.computed && at.property.type === AST_NODE_TYPES.Identifier) {
    if (at.object.type === AST_NODE_TYPES.Identifier && at.object.name === 'kinds') return at.property.name;
    return undefined;
  }
  if (at.type === AST_NODE_TYPES.Identifier) {
    const init = declarationOf(at, scopeOf);
    return init ? kindNameOf(init, scopeOf, depth + 1) : undefined;
  }
  if (at.type === AST_NODE_TYPES.ObjectExpression) return literalKind(at, scopeOf, depth);
  if (at.type === AST_NODE_TYPES.CallExpression) {
    const name = calleeName(at);
    const first = at.arguments[0];
    if (name === 'defineCustomKind' && first?.type === AST_NODE_TYPES.ObjectExpression) {
      const names = propertyNamed(first, 'names');
      return names?.value.type === AST_NODE_TYPES.ObjectExpression
        ? stringValue(propertyNamed(names.value, 'kind')?.value)
        : undefined;
    }
    if (name === 'kind') return stringValue(at.arguments[1]);
    // `DATABASE.version('v1alpha1')` is the same kind.
    if (name === 'version' && at.callee.type === AST_NODE_TYPES.MemberExpression)
      return kindNameOf(at.callee.object, scopeOf, depth + 1);
  }
  return undefined;
}

function stringValue(node: TSESTree.Node | undefined): string | undefined {
  return node?.type === AST_NODE_TYPES.Literal && typeof node.value === 'string' ? node.value : undefined;
}

/** An object literal's `kind`: written there (`'ConfigMap'`, `SECRET.kind`) or spread in (`...CONFIG_MAP_TYPE`). */
function literalKind(
  object: TSESTree.ObjectExpression,
  scopeOf: (node: TSESTree.Node) => Scope,
  depth: number,
): string | undefined {
  const kind = propertyNamed(object, 'kind');
  if (kind !== undefined) {
    const literal = stringValue(kind.value);
    if (literal !== undefined) return literal;
    const value = unwrap(kind.value);
    if (value.type === AST_NODE_TYPES.MemberExpression && !value.computed && keyName(value.property, false) === 'kind')
      return kindNameOf(value.object, scopeOf, depth + 1);
    return undefined;
  }
  for (const p of object.properties)
    if (p.type === AST_NODE_TYPES.SpreadElement) {
      const spread = kindNameOf(p.argument, scopeOf, depth + 1);
      if (spread !== undefined) return spread;
    }
  return undefined;
}

/** Whether an object literal carries `metadata.ownerReferences` (true), cannot (false), or may through a spread. */
function literalReferenced(object: TSESTree.ObjectExpression): boolean | 'unknown' {
  const metadata = propertyNamed(object, 'metadata');
  if (metadata === undefined) return hasSpread(object) ? 'unknown' : false;
  const value = unwrap(metadata.value);
  if (value.type !== AST_NODE_TYPES.ObjectExpression) return 'unknown'; // `metadata: meta`
  if (propertyNamed(value, 'ownerReferences') !== undefined) return true;
  return hasSpread(value) ? 'unknown' : false;
}

/** True when `node` is `setControllerReference(owner, node)`'s second argument. */
function isControllerReferenceTarget(node: TSESTree.Node): boolean {
  const parent = node.parent;
  return (
    parent?.type === AST_NODE_TYPES.CallExpression &&
    calleeName(parent) === 'setControllerReference' &&
    parent.arguments[1] === node
  );
}

/** True when a use of a variable gives it an owner reference: `setControllerReference(o, v)`, `v.metadata.ownerReferences = …`, `v.metadata = …`. */
function referencesThrough(use: TSESTree.Identifier): boolean {
  if (isControllerReferenceTarget(use)) return true;
  let at: TSESTree.Node = use;
  while (at.parent?.type === AST_NODE_TYPES.MemberExpression && at.parent.object === at) at = at.parent;
  const assigned = at.parent?.type === AST_NODE_TYPES.AssignmentExpression && at.parent.left === at;
  if (!assigned || at === use || at.type !== AST_NODE_TYPES.MemberExpression) return false;
  const name = keyName(at.property, at.computed);
  return name === 'ownerReferences' || name === 'metadata';
}

function createdObject(node: TSESTree.Node, scopeOf: (node: TSESTree.Node) => Scope, depth = 0): CreatedObject {
  if (depth > MAX_RESOLVE_DEPTH) return UNKNOWN;
  const at = unwrap(node);
  if (at.type === AST_NODE_TYPES.ObjectExpression)
    return { kind: literalKind(at, scopeOf, depth), referenced: literalReferenced(at) };
  if (at.type === AST_NODE_TYPES.CallExpression) {
    const name = calleeName(at);
    const child = at.arguments[1];
    if (name === 'setControllerReference' && child !== undefined)
      return { kind: createdObject(child, scopeOf, depth + 1).kind, referenced: true };
    const first = at.arguments[0];
    if (name === 'structuredClone' && first !== undefined) return createdObject(first, scopeOf, depth + 1);
    return UNKNOWN;
  }
  if (at.type === AST_NODE_TYPES.Identifier) {
    const variable = variableOf(at, scopeOf);
    const def = variable?.defs[0];
    if (def?.node.type !== AST_NODE_TYPES.VariableDeclarator || def.node.init == null) return UNKNOWN;
    const init = createdObject(def.node.init, scopeOf, depth + 1);
    if (
      init.referenced === false &&
      variable!.references.some(
        (r) => r.identifier.type === AST_NODE_TYPES.Identifier && referencesThrough(r.identifier),
      )
    )
      return { kind: init.kind, referenced: true };
    return init;
  }
  return UNKNOWN;
}

/** True when a `createOrPatch` mutate callback gives its object a controller reference. */
function mutateReferences(mutate: TSESTree.Node | undefined, visitorKeys: TSESLint.SourceCode.VisitorKeys): boolean {
  if (mutate?.type !== AST_NODE_TYPES.ArrowFunctionExpression && mutate?.type !== AST_NODE_TYPES.FunctionExpression)
    return mutate !== undefined; // a named mutate function: not followed
  let found = false;
  walk(mutate.body, visitorKeys, (n) => {
    if (n.type === AST_NODE_TYPES.CallExpression && calleeName(n) === 'setControllerReference') found = true;
    if (
      n.type === AST_NODE_TYPES.MemberExpression &&
      keyName(n.property, n.computed) === 'ownerReferences' &&
      n.parent?.type === AST_NODE_TYPES.AssignmentExpression &&
      n.parent.left === n
    )
      found = true;
  });
  return found;
}

function walk(
  node: TSESTree.Node,
  visitorKeys: TSESLint.SourceCode.VisitorKeys,
  visit: (node: TSESTree.Node) => void,
): void {
  visit(node);
  for (const key of visitorKeys[node.type] ?? []) {
    const child = (node as unknown as Record<string, unknown>)[key];
    for (const c of Array.isArray(child) ? child : [child])
      if (c !== null && typeof c === 'object' && typeof (c as TSESTree.Node).type === 'string')
        walk(c as TSESTree.Node, visitorKeys, visit);
  }
}

/** The kinds `.owns(…)` names in the builder chain a `.complete(…)` call ends. */
function ownedKinds(complete: TSESTree.CallExpression, scopeOf: (node: TSESTree.Node) => Scope): Set<string> {
  const owned = new Set<string>();
  let at: TSESTree.Node = complete.callee;
  while (at.type === AST_NODE_TYPES.MemberExpression && at.object.type === AST_NODE_TYPES.CallExpression) {
    const call: TSESTree.CallExpression = at.object;
    if (calleeName(call) === 'owns' && call.arguments[0] !== undefined) {
      const kind = kindNameOf(call.arguments[0], scopeOf);
      if (kind !== undefined) owned.add(kind);
    }
    at = call.callee;
  }
  return owned;
}

/** The function bodies of the reconciler handed to `.complete(…)`, when this file declares it. */
function reconcilerParts(
  reconciler: TSESTree.Node | undefined,
  scopeOf: (node: TSESTree.Node) => Scope,
  depth = 0,
): TSESTree.Node[] {
  if (reconciler === undefined || depth > MAX_RESOLVE_DEPTH) return [];
  const at = unwrap(reconciler);
  switch (at.type) {
    case AST_NODE_TYPES.ArrowFunctionExpression:
    case AST_NODE_TYPES.FunctionExpression:
    case AST_NODE_TYPES.FunctionDeclaration:
      return [at.body ?? at];
    case AST_NODE_TYPES.ClassDeclaration:
    case AST_NODE_TYPES.ClassExpression:
      // Every member: the creates often sit in helper methods the reconcile calls.
      return at.body.body.flatMap((m) =>
        (m.type === AST_NODE_TYPES.MethodDefinition || m.type === AST_NODE_TYPES.PropertyDefinition) && m.value
          ? [m.value]
          : [],
      );
    case AST_NODE_TYPES.ObjectExpression:
      return at.properties.flatMap((p) => (p.type === AST_NODE_TYPES.Property ? [p.value] : []));
    case AST_NODE_TYPES.NewExpression:
      return reconcilerParts(at.callee, scopeOf, depth + 1);
    case AST_NODE_TYPES.Identifier: {
      const declaration = declarationOf(at, scopeOf);
      return declaration ? reconcilerParts(declaration, scopeOf, depth + 1) : [];
    }
    default:
      return [];
  }
}

/** What a call creates: the object, and for the typed forms the kind it is created as. */
interface Creation {
  readonly object: TSESTree.Node;
  /** `client.apply(kind, config, opts)`, `applyOwned(client, kind, config, opts)`: the config carries no kind. */
  readonly kind?: TSESTree.Node;
}

/**
 * The object a call creates — `client.create(obj)`, `client.apply(obj, opts)`, `createOrPatch(client, obj, …)`,
 * `applyOwned(client, obj, opts)`, and the typed applies `client.apply(kind, config, opts)` and
 * `applyOwned(client, kind, config, opts)` — if it is one.
 */
function createdBy(call: TSESTree.CallExpression): Creation | undefined {
  const name = calleeName(call);
  const [a, b, c] = call.arguments;
  // Only member calls: a bare `create(…)` is some other function.
  if (call.callee.type === AST_NODE_TYPES.MemberExpression) {
    if (name === 'create' && a) return { object: a };
    if (name === 'apply' && a) return call.arguments.length >= 3 && b ? { object: b, kind: a } : { object: a };
  }
  if (name === 'createOrPatch' && b) return { object: b };
  if (name === 'applyOwned' && b) return call.arguments.length >= 4 && c ? { object: c, kind: b } : { object: b };
  return undefined;
}

export const ownedCreateWithControllerReference = createRule<[], 'noControllerReference'>({
  name: 'owned-create-with-controller-reference',
  meta: {
    type: 'problem',
    docs: {
      description:
        'Require a controller reference on objects of a kind the controller `owns()`, created in its reconciler: without it the garbage collector never deletes them and their changes never reconcile the owner.',
      recommended: 'error',
    },
    schema: [],
    messages: {
      noControllerReference:
        'This controller `owns({{kind}})`, but this {{kind}} is created without a controller reference: it is not deleted with its owner, and `owns` maps its events to the owner through that reference, so its changes never reconcile it. Wrap it: `setControllerReference(owner, obj)` from operator-runtime/helpers.',
    },
  },
  defaultOptions: [],
  create(context) {
    const sourceCode = context.sourceCode;
    const scopeOf = (node: TSESTree.Node): Scope => sourceCode.getScope(node);
    return {
      CallExpression(node) {
        if (calleeName(node) !== 'complete' || node.callee.type !== AST_NODE_TYPES.MemberExpression) return;
        const owned = ownedKinds(node, scopeOf);
        if (owned.size === 0) return;
        for (const part of reconcilerParts(node.arguments[0], scopeOf))
          walk(part, sourceCode.visitorKeys, (n) => {
            if (n.type !== AST_NODE_TYPES.CallExpression) return;
            const creation = createdBy(n);
            if (creation === undefined) return;
            const created = createdObject(creation.object, scopeOf);
            const kind = creation.kind ? kindNameOf(creation.kind, scopeOf) : created.kind;
            if (kind === undefined || !owned.has(kind) || created.referenced !== false) return;
            if (calleeName(n) === 'createOrPatch' && mutateReferences(n.arguments[2], sourceCode.visitorKeys)) return;
            context.report({ node: creation.object, messageId: 'noControllerReference', data: { kind } });
          });
      },
    };
  },
});
