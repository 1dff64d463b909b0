/**
 * Doc samples that compile: every ```ts / ```typescript block of the README, docs/, the module
 * READMEs and every other markdown file of the repository is written to a folder under .tmp/ (inside the repository, so 'operator-runtime'
 * resolves to src/ through the package's self-reference and the `operator-runtime-source`
 * condition of tsconfig.json) and type-checked with the repository's compiler options.
 * A block that is not meant to compile says so in its info string: ```ts no-check.
 *
 *   node --import tsx scripts/doc-samples.ts    prints every broken sample as file:line, exit 1
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const REPO_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** The info-string flag that exempts a block from the check. */
export const NO_CHECK_FLAG = 'no-check';

const TS_LANGUAGES = new Set(['ts', 'typescript']);

export interface DocSample {
  /** Markdown file, relative to the repository root, with forward slashes. */
  readonly file: string;
  /** 1-based line of the sample's first code line in `file`. */
  readonly line: number;
  readonly code: string;
  /** False for blocks marked ```ts no-check. */
  readonly check: boolean;
}

export interface SampleDiagnostic {
  /** `file:line` in the markdown, e.g. `README.md:42`. */
  readonly location: string;
  readonly message: string;
}

/** Folders whose markdown files are checked, besides the root README.md. */
export const DOC_DIRS = ['docs', 'src', 'examples', 'chaos', 'monitoring', 'bench', 'scripts'] as const;

/** README.md and every markdown file under DOC_DIRS (docs/, the module READMEs…), relative to `root`, sorted. */
export function docFiles(root: string = REPO_ROOT): string[] {
  const out: string[] = [];
  if (exists(join(root, 'README.md'))) out.push('README.md');
  for (const dir of DOC_DIRS) for (const f of walk(root, dir)) if (f.endsWith('.md')) out.push(f);
  return out.sort();
}

/** The TypeScript fenced blocks of one markdown text. */
export function extractSamples(markdown: string, file: string): DocSample[] {
  const lines = markdown.split('\n');
  const samples: DocSample[] = [];
  let open: { fence: string; start: number; lang: string; check: boolean; body: string[] } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    if (!open) {
      const m = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$/.exec(text);
      if (!m) continue;
      const flags = (m[3] ?? '').split(/\s+/).filter(Boolean);
      open = {
        fence: m[1]!,
        start: i + 2,
        lang: (m[2] ?? '').toLowerCase(),
        check: !flags.includes(NO_CHECK_FLAG),
        body: [],
      };
      continue;
    }
    // A closing fence: the same character, at least as long, nothing after it.
    if (new RegExp(`^ {0,3}${open.fence[0] === '`' ? '`' : '~'}{${open.fence.length},}\\s*$`).test(text)) {
      if (TS_LANGUAGES.has(open.lang))
        samples.push({ file, line: open.start, code: open.body.join('\n'), check: open.check });
      open = undefined;
      continue;
    }
    open.body.push(text);
  }
  return samples;
}

/**
 * The fenced blocks of a TypeScript file's doc comments (` * ```ts` … ` * ````), with the line
 * of their first code line in that file: they show in editors as the API's documentation.
 */
export function extractCommentSamples(source: string, file: string): DocSample[] {
  // Each doc-comment line, its ` * ` prefix removed; other lines blanked so line numbers hold.
  const lines = source.split('\n').map((l) => /^\s*\*(?!\/)\s?(.*)$/.exec(l)?.[1] ?? '');
  return extractSamples(lines.join('\n'), file);
}

/** Source files whose doc comments are checked: src/ and examples/, tests left out. */
export function sourceFiles(root: string = REPO_ROOT): string[] {
  return ['src', 'examples']
    .flatMap((d) => walk(root, d))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .sort();
}

/** Every sample of every doc file, and of every doc comment in src/ and examples/, under `root`. */
export function collectSamples(root: string = REPO_ROOT): DocSample[] {
  return [
    ...docFiles(root).flatMap((f) => extractSamples(readFileSync(join(root, f), 'utf8'), f)),
    ...sourceFiles(root).flatMap((f) => extractCommentSamples(readFileSync(join(root, f), 'utf8'), f)),
  ];
}

/**
 * Type-checks `samples` (those with `check`) as ES modules under `root`/.tmp with `root`'s
 * tsconfig.json compiler options. Returns one diagnostic per error, located in the markdown.
 */
export function checkSamples(samples: readonly DocSample[], root: string = REPO_ROOT): SampleDiagnostic[] {
  const checked = samples.filter((s) => s.check);
  if (checked.length === 0) return [];
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(root, '.tmp', 'doc-samples-'));
  try {
    const byPath = new Map<string, DocSample>();
    checked.forEach((s, i) => {
      const path = join(dir, `sample-${i}.ts`);
      // `export {}` on the last line keeps every line number and makes a sample without imports a module.
      writeFileSync(path, `${s.code}\nexport {};\n`);
      byPath.set(path, s);
    });
    const config = ts.getParsedCommandLineOfConfigFile(
      join(root, 'tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
        },
      },
    );
    if (!config) throw new Error(`cannot read ${join(root, 'tsconfig.json')}`);
    const program = ts.createProgram({ rootNames: [...byPath.keys()], options: { ...config.options, noEmit: true } });
    const out: SampleDiagnostic[] = [];
    for (const d of ts.getPreEmitDiagnostics(program)) {
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      const sample = d.file ? byPath.get(resolve(d.file.fileName)) : undefined;
      if (d.file && sample && d.start !== undefined) {
        const { line } = d.file.getLineAndCharacterOfPosition(d.start);
        out.push({ location: `${sample.file}:${sample.line + line}`, message });
      } else if (!d.file) {
        out.push({ location: 'tsconfig.json', message });
      }
      // Errors inside src/ are the typecheck step's to report (and other people's edits in progress
      // must not fail the doc check); a sample that misuses src/ fails in the sample itself.
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function walk(root: string, dir: string): string[] {
  const abs = join(root, dir);
  if (!exists(abs)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...walk(root, rel));
    else out.push(rel.split(sep).join('/'));
  }
  return out;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const samples = collectSamples();
  const errors = checkSamples(samples);
  for (const e of errors) console.log(`${e.location}: ${e.message}`);
  const skipped = samples.filter((s) => !s.check).length;
  console.log(
    `${samples.length} samples, ${samples.length - skipped} checked, ${skipped} skipped (${NO_CHECK_FLAG}), ${errors.length} errors`,
  );
  process.exitCode = errors.length > 0 ? 1 : 0;
}
