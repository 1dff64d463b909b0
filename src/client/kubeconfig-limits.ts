/**
 * Size and shape limits on kubeconfig text, checked before the YAML parser builds anything (issue
 * 35). A member Secret's kubeconfig is written by someone else, and the parser's cost is not
 * linear in the text: 380 KiB of keys stalled the event loop 14 s (yaml's duplicate-key check is
 * quadratic per mapping), and 512 KiB of `[[[…` took 15 s and ~1 KiB of memory per byte. So the size is
 * checked first, then one pass over yaml's own lexer tokens (the tokens the parser will see, so a
 * quote or a comment cannot hide structure from the count) that stops at the first limit crossed.
 */
import { createRequire } from 'node:module';
import { InvalidOptionError, OperatorRuntimeError } from '../core/errors.js';

/**
 * Largest kubeconfig accepted, in bytes (UTF-8). A kubeconfig with 200 contexts over 40 clusters,
 * each with its CA, client certificate and key inline, is 238 KiB; a Secret holds at most 1 MiB.
 * @defaultValue 256 KiB
 */
export const DEFAULT_MAX_KUBECONFIG_BYTES = 256 * 1024;
/**
 * Deepest nesting accepted, in block and flow collections together (client-go's kubeconfig
 * needs about 8: `users[].user.exec.env[].name`). @defaultValue 32
 */
export const DEFAULT_MAX_KUBECONFIG_DEPTH = 32;
/**
 * Most nodes accepted: scalars, aliases, collections, entries, and also lines and comments (the
 * parser spends on each as on a node). A kubeconfig with 200 contexts over 60 clusters has about
 * 5,800 (YAML) or 5,500 (JSON); one with 1,000 contexts, about 15,000. @defaultValue 20,000
 */
export const DEFAULT_MAX_KUBECONFIG_NODES = 20_000;
/** Most alias references (`*name`) accepted; tools never write them, people seldom do. @defaultValue 32 */
export const DEFAULT_MAX_KUBECONFIG_ALIASES = 32;

/**
 * The limits on the operator's own kubeconfig files (`loadKubeconfigFile`, `KUBECONFIG`,
 * `~/.kube/config`): written by whoever runs the operator, not by a member cluster's owner, and a
 * personal kubeconfig with hundreds of clusters and inline certificates runs to megabytes. The size
 * is the local-file read cap; depth and aliases keep their defaults (no tool writes more), and the
 * nodes scale with the size. The checks stay linear, so a big file costs time in proportion only.
 * Kubeconfigs from member Secrets and folders keep the `DEFAULT_MAX_KUBECONFIG_*` limits.
 */
export const LOCAL_KUBECONFIG_LIMITS: KubeconfigLimits = Object.freeze({
  maxBytes: 16 * 1024 * 1024,
  maxNodes: 2_000_000,
});

/** Limits on kubeconfig text; each may be `Infinity` to turn that check off. */
export interface KubeconfigLimits {
  /** @defaultValue {@link DEFAULT_MAX_KUBECONFIG_BYTES} */
  readonly maxBytes?: number;
  /** @defaultValue {@link DEFAULT_MAX_KUBECONFIG_DEPTH} */
  readonly maxDepth?: number;
  /** @defaultValue {@link DEFAULT_MAX_KUBECONFIG_NODES} */
  readonly maxNodes?: number;
  /** @defaultValue {@link DEFAULT_MAX_KUBECONFIG_ALIASES} */
  readonly maxAliases?: number;
}

export type KubeconfigLimitName = keyof KubeconfigLimits;

const WHAT: Record<KubeconfigLimitName, string> = {
  maxBytes: 'bytes',
  maxDepth: 'levels of nesting',
  maxNodes: 'nodes',
  maxAliases: 'aliases',
};

/**
 * A kubeconfig refused before parsing because it crosses a limit. The message names the limit and
 * what was measured (a size, a count, a line number), never the content.
 */
export class KubeconfigLimitError extends OperatorRuntimeError {
  declare readonly code: 'ERR_KUBECONFIG_LIMIT';
  readonly limit: KubeconfigLimitName;
  readonly max: number;
  /** The size in bytes; for the counts, the count where the scan stopped (one over `max`). */
  readonly actual: number;
  /** Line (from 1) where a count crossed its limit; not set for `maxBytes`. */
  readonly line: number | undefined;
  constructor(
    limit: KubeconfigLimitName,
    max: number,
    actual: number,
    options: { readonly line?: number; readonly file?: string } = {},
  ) {
    const measured =
      limit === 'maxBytes'
        ? `is ${actual} bytes, more than the limit of ${max}`
        : `has more than ${max} ${WHAT[limit]} (line ${options.line ?? '?'})`;
    super('ERR_KUBECONFIG_LIMIT', `kubeconfig ${measured} (${limit})${options.file ? ` (in ${options.file})` : ''}`);
    this.limit = limit;
    this.max = max;
    this.actual = actual;
    this.line = options.line;
  }
}

function limitOf(limits: KubeconfigLimits, name: KubeconfigLimitName, fallback: number): number {
  const value = limits[name];
  if (value === undefined) return fallback;
  if (value !== Infinity && !(Number.isSafeInteger(value) && value >= 0))
    throw new InvalidOptionError(name, 'must be a whole number of at least 0, or Infinity');
  return value;
}

/** Refuses a kubeconfig of `bytes` bytes over `maxBytes`; cheap, so callers holding bytes check before decoding. */
export function checkKubeconfigSize(bytes: number, limits: KubeconfigLimits = {}): void {
  const max = limitOf(limits, 'maxBytes', DEFAULT_MAX_KUBECONFIG_BYTES);
  if (bytes > max) throw new KubeconfigLimitError('maxBytes', max, bytes);
}

const require = createRequire(import.meta.url);

/** One column of block indentation, and which block collections start there. */
interface Indent {
  readonly col: number;
  seq: boolean;
  map: boolean;
}

/**
 * Throws {@link KubeconfigLimitError} when `text` crosses a limit. Linear in the text, and stops at
 * the first limit crossed, so a hostile kubeconfig costs at most `maxNodes` tokens of lexing.
 *
 * The depth counted is an upper bound of the parser's: flow levels exactly (the lexer's `[`/`{`),
 * plus one block level per indentation column open at the line (two where a sequence and a mapping
 * start at the same column, as in `key:\n- item`), including compact ones (`- - x`).
 */
export function checkKubeconfigText(text: string, limits: KubeconfigLimits = {}): void {
  // A string's UTF-8 size is at least its length: no need to measure a string far too long.
  const maxBytes = limitOf(limits, 'maxBytes', DEFAULT_MAX_KUBECONFIG_BYTES);
  if (text.length > maxBytes) throw new KubeconfigLimitError('maxBytes', maxBytes, Buffer.byteLength(text, 'utf8'));
  checkKubeconfigSize(Buffer.byteLength(text, 'utf8'), limits);
  const maxDepth = limitOf(limits, 'maxDepth', DEFAULT_MAX_KUBECONFIG_DEPTH);
  const maxNodes = limitOf(limits, 'maxNodes', DEFAULT_MAX_KUBECONFIG_NODES);
  const maxAliases = limitOf(limits, 'maxAliases', DEFAULT_MAX_KUBECONFIG_ALIASES);

  // Lines count as nodes (below): counting them first is a hundred times cheaper than lexing them.
  for (let lines = 0, nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', nl + 1))
    if (++lines > maxNodes) throw new KubeconfigLimitError('maxNodes', maxNodes, lines, { line: lines });

  // Loaded here, not at import: see parseYaml in kubeconfig.ts.
  const { Lexer, CST }: typeof import('yaml') = require('yaml');
  const stack: Indent[] = [];
  let block = 0;
  let flow = 0;
  let nodes = 0;
  let aliases = 0;
  let line = 1;
  let col = 0;
  // Only block indicators so far on this line: the next token opens (or closes) block levels.
  let lineStart = true;
  let scalarSource = false;
  let blockScalar = false;

  const over = (limit: KubeconfigLimitName, max: number, actual: number): never => {
    throw new KubeconfigLimitError(limit, max, actual, { line });
  };
  const place = (at: number, kind: 'seq' | 'map'): void => {
    while (stack.length > 0 && stack[stack.length - 1]!.col > at) {
      const gone = stack.pop()!;
      block -= Number(gone.seq) + Number(gone.map);
    }
    let top = stack[stack.length - 1];
    if (!top || top.col < at) {
      top = { col: at, seq: false, map: false };
      stack.push(top);
    }
    if (!top[kind]) {
      top[kind] = true;
      block++;
      if (block + flow > maxDepth) over('maxDepth', maxDepth, block + flow);
    }
  };
  const node = (): void => {
    if (++nodes > maxNodes) over('maxNodes', maxNodes, nodes);
  };

  for (const token of new Lexer().lex(text)) {
    const at = col;
    // Position after the token; the lexer's control tokens (\x02, \x18, \x1f) are not source text.
    if (token.length === 1 && token < ' ' && token !== '\t' && token !== '\n') {
      // zero width
    } else {
      let nl = token.indexOf('\n');
      if (nl === -1) col += token.length;
      else {
        let last = nl;
        while (nl !== -1) {
          line++;
          last = nl;
          nl = token.indexOf('\n', nl + 1);
        }
        col = token.length - last - 1;
      }
    }
    // A token that ends a line (a block scalar's text does) leaves the next one at a line start.
    const endsLine = col === 0 && token.length > 0 && token !== '\n' && token !== '\r\n';
    if (scalarSource) {
      // A plain or block scalar's text: whatever it looks like ("-", "[") it is a leaf.
      scalarSource = false;
      if (flow === 0 && lineStart && !blockScalar) place(at, 'map');
      lineStart = endsLine;
      blockScalar = false;
      continue;
    }
    switch (CST.tokenType(token)) {
      case 'scalar':
        node();
        scalarSource = true;
        break;
      case 'single-quoted-scalar':
      case 'double-quoted-scalar':
        node();
        if (flow === 0 && lineStart) place(at, 'map');
        lineStart = endsLine;
        break;
      case 'flow-map-start':
      case 'flow-seq-start':
        node();
        flow++;
        if (block + flow > maxDepth) over('maxDepth', maxDepth, block + flow);
        lineStart = false;
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        if (flow > 0) flow--;
        break;
      case 'comma':
        node();
        break;
      case 'seq-item-ind':
        node();
        if (flow === 0 && lineStart) place(at, 'seq');
        break;
      case 'explicit-key-ind':
        node();
        if (flow === 0 && lineStart) place(at, 'map');
        break;
      case 'map-value-ind':
        if (flow === 0 && lineStart) place(at, 'map');
        lineStart = false;
        break;
      case 'alias':
        node();
        if (++aliases > maxAliases) over('maxAliases', maxAliases, aliases);
        if (flow === 0 && lineStart) place(at, 'map');
        lineStart = false;
        break;
      case 'block-scalar-header':
        blockScalar = true;
        lineStart = false;
        break;
      case 'newline':
      case 'comment':
        // No node, but each costs the parser about as much as one: 200 KiB of blank lines took it
        // longer than a real kubeconfig of 250 KiB.
        node();
        if (token !== '' && token[0] !== '#') lineStart = true;
        break;
      default:
        // Spaces, anchors, tags, document markers, errors: no level of their own.
        break;
    }
  }
}
