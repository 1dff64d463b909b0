/**
 * Comments and docs point only at what is in the repository: every repository path mentioned in a
 * comment (TypeScript, shell) or a markdown file — a path from the root (src, docs, examples…), a
 * module path inside src (module folder, then file), a relative one (`./`, `../`) — must exist and
 * stay inside the repository; a markdown or TypeScript file named without its folder must exist
 * somewhere in it; nor may anything cite the practices "seed", which is not in it.
 *
 *   node --import tsx scripts/doc-links.ts    prints every dangling reference as file:line, exit 1
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './doc-samples.js';

/** Top-level folders scanned; a path mentioned that starts with one of them is checked. */
export const SCANNED_DIRS = ['src', 'examples', 'docs', 'scripts', 'bench', 'chaos', 'monitoring'] as const;
const TOP_LEVEL = ['src', 'docs', 'examples', 'scripts', 'bench', 'chaos', 'monitoring', 'config', 'test'];
/** A src module folder then a file name (with its extension) names a module's file: checked too. */
const MODULES = [
  'core',
  'client',
  'cache',
  'workqueue',
  'controller',
  'leader-election',
  'helpers',
  'metrics',
  'logging',
  'manager',
  'testing',
  'console',
];
/** Paths under these are build or run output: they exist only after a build or a run. */
const GENERATED_SEGMENTS = new Set(['dist', '.tmp', 'node_modules']);

export interface DanglingReference {
  /** `file:line`, the file relative to the repository root. */
  readonly location: string;
  readonly reference: string;
  readonly reason: string;
}

/** The files whose comments (code) or whole text (markdown) are checked, relative to `root`. */
export function scannedFiles(root: string = REPO_ROOT): string[] {
  const out = ['README.md'];
  for (const dir of SCANNED_DIRS) out.push(...walk(root, dir).filter((f) => /\.(ts|md|sh)$/.test(f)));
  return out.filter((f) => existsSync(join(root, f))).sort();
}

/** Comment text of a TypeScript source, with the 1-based line each comment starts on. */
export function tsComments(text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true);
  const seen = new Set<number>();
  const out: { line: number; text: string }[] = [];
  const take = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      out.push({ line: source.getLineAndCharacterOfPosition(r.pos).line + 1, text: text.slice(r.pos, r.end) });
    }
  };
  const visit = (node: ts.Node) => {
    take(ts.getLeadingCommentRanges(text, node.pos));
    take(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return out.sort((a, b) => a.line - b.line);
}

/** Shell comments (`# ...`, not `#!`), one per line. */
export function shellComments(text: string): { line: number; text: string }[] {
  return text
    .split('\n')
    .map((l, i) => ({ line: i + 1, m: /(?:^|\s)#(?!!)(.*)$/.exec(l) }))
    .filter((x) => x.m && !/\$\{?#/.test(x.m.input))
    .map((x) => ({ line: x.line, text: x.m![1]! }));
}

/** Dangling references in one file's text. `file` is relative to `root`. */
export function checkText(file: string, text: string, root: string = REPO_ROOT): DanglingReference[] {
  const chunks = file.endsWith('.ts')
    ? tsComments(text)
    : file.endsWith('.sh')
      ? shellComments(text)
      : [{ line: 1, text }];
  const out: DanglingReference[] = [];
  for (const chunk of chunks) {
    chunk.text.split('\n').forEach((lineText, i) => {
      const location = `${file}:${chunk.line + i}`;
      if (/\bseed's\b|\bseed\s+(?:\d|chapters?\b)/i.test(lineText) || /\.\.\/seed\b/.test(lineText)) {
        out.push({
          location,
          reference: /\bseed\S*(?:\s+\S+)?/i.exec(lineText)![0],
          reason: 'cites the practices seed, which is not in the repository',
        });
      }
      for (const ref of pathMentions(lineText)) {
        const reason = resolveReference(root, file, ref);
        if (reason) out.push({ location, reference: ref, reason });
      }
      // A document or source file named without its folder must still be one of ours.
      for (const m of lineText.matchAll(/(?<![\w./@:$-])([A-Za-z0-9_][\w.-]*\.(?:md|ts))(?![\w/])/g)) {
        if (!fileNames(root).has(m[1]!))
          out.push({
            location,
            reference: m[1]!,
            reason: m[1]!.endsWith('.md')
              ? 'names a document that is not in the repository'
              : 'names a file that is not in the repository',
          });
      }
    });
  }
  return out;
}

const fileNamesByRoot = new Map<string, Set<string>>();
/** File names (without folders) of every file in the repository. */
function fileNames(root: string): Set<string> {
  let names = fileNamesByRoot.get(root);
  if (!names) {
    names = new Set(walk(root, '.').map((f) => f.slice(f.lastIndexOf('/') + 1)));
    fileNamesByRoot.set(root, names);
  }
  return names;
}

/** Every dangling reference under `root`. */
export function checkRepository(root: string = REPO_ROOT): DanglingReference[] {
  return scannedFiles(root).flatMap((f) => checkText(f, readFileSync(join(root, f), 'utf8'), root));
}

/** Repository-looking paths in a line: from the root, relative (dot-slash or dot-dot-slash), or module paths. */
export function pathMentions(line: string): string[] {
  const re = new RegExp(
    String.raw`(?<![\w./@:-])((?:\.\.?\/)+[\w.@-]+(?:\/[\w.@-]*)*|(?:${TOP_LEVEL.join('|')})\/[\w.@-]*(?:\/[\w.@-]*)*)`,
    'g',
  );
  const out: string[] = [];
  for (const m of line.matchAll(re)) {
    const after = line.slice(m.index + m[0].length);
    // Globs, placeholders and templates (`src/**/x`, `src/<module>`, `${dir}/x`) name no one file.
    if (/^[*<{$…]/.test(after)) continue;
    let ref = m[1]!.replace(/[.,;:]+$/, '');
    if (ref === '' || /^\.\.?\/?$/.test(ref)) continue;
    ref = ref.replace(/\/+$/, '');
    out.push(ref);
  }
  const moduleRe = new RegExp(
    String.raw`(?<![\w./@:-])((?:${MODULES.join('|')})\/[\w.@-]+(?:\/[\w.@-]+)*\.(?:ts|md|json|yaml|sh))(?![\w/])`,
    'g',
  );
  for (const m of line.matchAll(moduleRe)) out.push(m[1]!);
  return out;
}

function resolveReference(root: string, file: string, ref: string): string | undefined {
  const segments = ref.split('/');
  if (segments.some((s) => GENERATED_SEGMENTS.has(s))) return undefined;
  if (ref.startsWith('.')) {
    const fromFile = resolve(root, dirname(file), ref);
    const rel = relative(root, fromFile);
    if (rel.startsWith('..') || rel.startsWith(sep)) return 'points outside the repository';
    return existsSync(fromFile) ? undefined : 'does not exist';
  }
  // A path from the root may be from the root or, inside a package such as examples/database-operator,
  // from that package; a module path from the file's folder or any folder above it.
  if (existsSync(join(root, ref)) || existsSync(join(root, packageRoot(root, file), ref))) return undefined;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(root, dir, ref))) return undefined;
    if (dir === '.' || dir === '') break;
  }
  return 'does not exist';
}

/** The nearest folder above `file` with a package.json (relative to root; '' for the root). */
function packageRoot(root: string, file: string): string {
  let dir = dirname(file);
  while (dir !== '.' && dir !== '') {
    if (existsSync(join(root, dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return '';
}

function walk(root: string, dir: string): string[] {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    if (GENERATED_SEGMENTS.has(entry.name) || entry.name.startsWith('.')) continue;
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...walk(root, rel));
    else out.push(rel);
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const dangling = checkRepository();
  for (const d of dangling) console.log(`${d.location}: ${d.reference} ${d.reason}`);
  console.log(`${scannedFiles().length} files scanned, ${dangling.length} dangling references`);
  process.exitCode = dangling.length > 0 ? 1 : 0;
}
