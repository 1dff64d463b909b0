import { AST_NODE_TYPES, type TSESTree } from '@typescript-eslint/utils';

/**
 * Where a reconcile is, read from the source alone: the function given to a builder's
 * `.complete(…)` (`controller(…)…complete(async (request, ctx) => …)`, also a fleet controller's), or
 * the `reconcile` method of a class or object literal (a `Reconciler` handed to `.complete`). Code
 * nested in one (callbacks, inner arrows) is in it too; a helper method it calls is not, since
 * following calls needs a call graph the rules do without to stay fast and type-information free.
 */
export interface ReconcileScope {
  /** The reconcile function itself. */
  readonly fn: TSESTree.FunctionLike;
  /**
   * How the reconcile's `signal` is spelled here: the destructured name (`{ signal }` or
   * `{ signal: s }` as the second parameter), or `ctx.signal` for a context parameter `ctx`;
   * undefined when the second parameter is missing or is a pattern without `signal`.
   */
  readonly signalText: string | undefined;
}

const FUNCTION_TYPES = new Set<AST_NODE_TYPES>([
  AST_NODE_TYPES.ArrowFunctionExpression,
  AST_NODE_TYPES.FunctionExpression,
  AST_NODE_TYPES.FunctionDeclaration,
]);

function isFunction(node: TSESTree.Node): node is TSESTree.FunctionLike {
  return FUNCTION_TYPES.has(node.type);
}

/** The static name of a property or method key (`reconcile`, `'reconcile'`), else undefined. */
export function keyName(key: TSESTree.Node, computed: boolean): string | undefined {
  if (!computed && key.type === AST_NODE_TYPES.Identifier) return key.name;
  if (key.type === AST_NODE_TYPES.Literal && typeof key.value === 'string') return key.value;
  return undefined;
}

/** The called name: `f` of `f(…)`, `m` of `a.b.m(…)`; undefined for computed or other callees. */
export function calleeName(call: TSESTree.CallExpression | TSESTree.NewExpression): string | undefined {
  const callee = call.callee;
  if (callee.type === AST_NODE_TYPES.Identifier) return callee.name;
  if (
    callee.type === AST_NODE_TYPES.MemberExpression &&
    !callee.computed &&
    callee.property.type === AST_NODE_TYPES.Identifier
  )
    return callee.property.name;
  return undefined;
}

function isReconcileFunction(fn: TSESTree.FunctionLike): boolean {
  const parent = fn.parent;
  if (parent === undefined) return false;
  if (parent.type === AST_NODE_TYPES.CallExpression && parent.arguments.includes(fn as TSESTree.Expression))
    return calleeName(parent) === 'complete' && parent.callee.type === AST_NODE_TYPES.MemberExpression;
  if (parent.type === AST_NODE_TYPES.MethodDefinition || parent.type === AST_NODE_TYPES.Property)
    return parent.value === fn && keyName(parent.key, parent.computed) === 'reconcile';
  if (parent.type === AST_NODE_TYPES.PropertyDefinition)
    return parent.value === fn && keyName(parent.key, parent.computed) === 'reconcile';
  return false;
}

function signalText(fn: TSESTree.FunctionLike): string | undefined {
  const ctx = fn.params[1];
  if (ctx === undefined) return undefined;
  const param = ctx.type === AST_NODE_TYPES.AssignmentPattern ? ctx.left : ctx;
  if (param.type === AST_NODE_TYPES.Identifier) return `${param.name}.signal`;
  if (param.type !== AST_NODE_TYPES.ObjectPattern) return undefined;
  for (const prop of param.properties) {
    if (prop.type !== AST_NODE_TYPES.Property || keyName(prop.key, prop.computed) !== 'signal') continue;
    const value = prop.value.type === AST_NODE_TYPES.AssignmentPattern ? prop.value.left : prop.value;
    if (value.type === AST_NODE_TYPES.Identifier) return value.name;
  }
  return undefined;
}

/** The reconcile `node` sits in (the innermost one), or undefined when it is not in one. */
export function reconcileScopeOf(node: TSESTree.Node): ReconcileScope | undefined {
  // Program's parent is null, not undefined.
  for (let at: TSESTree.Node | null | undefined = node.parent; at; at = at.parent) {
    if (isFunction(at) && isReconcileFunction(at)) return { fn: at, signalText: signalText(at) };
  }
  return undefined;
}

/** An object literal's property by static name (spreads and computed keys are skipped). */
export function propertyNamed(object: TSESTree.ObjectExpression, name: string): TSESTree.Property | undefined {
  for (const p of object.properties)
    if (p.type === AST_NODE_TYPES.Property && keyName(p.key, p.computed) === name) return p;
  return undefined;
}

/** True when an object literal has a spread, so a property it lacks may still come from elsewhere. */
export function hasSpread(object: TSESTree.ObjectExpression): boolean {
  return object.properties.some((p) => p.type === AST_NODE_TYPES.SpreadElement);
}
