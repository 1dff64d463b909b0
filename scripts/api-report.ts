/**
 * The API report: every name each package entry point exports, with its kind and declared type,
 * one file per entry under api/, so every public change shows up as a reviewed diff.
 *
 * Entries are read from package.json `exports` (the `operator-runtime-source` file of each), and the
 * types come from the TypeScript compiler over those sources. Output is sorted and free of local
 * paths so it is the same on every machine.
 *
 *   node --import tsx scripts/api-report.ts           # rewrite api/*.api.md
 *   node --import tsx scripts/api-report.ts --count   # print the number of names per entry
 *
 * scripts/api-report.test.ts regenerates the report in memory and fails with a diff when the
 * committed files differ.
 */
import { readFileSync, readdirSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const API_DIR = join(REPO_ROOT, 'api');
export const UPDATE_COMMAND = 'node --import tsx scripts/api-report.ts';
const SOURCE_CONDITION = 'operator-runtime-source';

export interface EntryPoint {
  /** The specifier users import: `operator-runtime`, `operator-runtime/testing`, … */
  readonly specifier: string;
  /** The source file, relative to the repository root. */
  readonly source: string;
  /** The report's file name under api/. */
  readonly reportFile: string;
}

export interface ApiEntryReport {
  readonly entry: EntryPoint;
  readonly names: readonly ApiName[];
  readonly text: string;
}

export interface ApiName {
  readonly name: string;
  readonly kind: string;
  readonly signature: string;
}

/** The entry points declared in package.json `exports`, in declaration order. */
export function readEntryPoints(root: string = REPO_ROOT): EntryPoint[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, unknown>;
  };
  const entries: EntryPoint[] = [];
  for (const [key, value] of Object.entries(pkg.exports)) {
    if (typeof value !== 'object' || value === null) continue; // the package.json export
    const source = (value as Record<string, unknown>)[SOURCE_CONDITION];
    if (typeof source !== 'string')
      throw new Error(`package.json exports["${key}"] has no "${SOURCE_CONDITION}" condition`);
    const specifier = key === '.' ? pkg.name : `${pkg.name}/${key.replace(/^\.\//, '')}`;
    const reportFile = `${specifier.replace(/\//g, '.')}.api.md`;
    entries.push({ specifier, source: source.replace(/^\.\//, ''), reportFile });
  }
  return entries;
}

function createProgram(root: string, files: readonly string[]): ts.Program {
  const configPath = join(root, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error(`cannot read ${configPath}`);
  return ts.createProgram({ rootNames: files.map((f) => join(root, f)), options: { ...parsed.options, noEmit: true } });
}

function isInternal(symbol: ts.Symbol): boolean {
  return symbol.getJsDocTags().some((tag) => tag.name === 'internal');
}

function isExternal(file: ts.SourceFile): boolean {
  return file.isDeclarationFile && /[\\/]node_modules[\\/]/.test(file.fileName);
}

/** A unique-symbol key prints as `__@name@<id>`, the id varying with the program: `[name]` instead. */
function symbolName(symbol: ts.Symbol): string {
  return stableText(symbol.name);
}

function stableText(text: string): string {
  return text.replace(/__@([\w$]+)@\d+/g, '[$1]');
}

function kindOf(symbol: ts.Symbol): string {
  const f = symbol.flags;
  if (f & ts.SymbolFlags.Class) return 'class';
  if (f & ts.SymbolFlags.Enum) return 'enum';
  if (f & ts.SymbolFlags.Function) return 'function';
  if (f & ts.SymbolFlags.Interface) return 'interface';
  if (f & ts.SymbolFlags.TypeAlias) return 'type';
  if (f & ts.SymbolFlags.Variable) {
    const decl = symbol.valueDeclaration;
    const list = decl?.parent;
    return list && ts.isVariableDeclarationList(list) && list.flags & ts.NodeFlags.Const ? 'const' : 'let';
  }
  if (f & (ts.SymbolFlags.ValueModule | ts.SymbolFlags.NamespaceModule)) return 'namespace';
  return 'unknown';
}

const FORMAT =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.WriteArrowStyleSignature |
  ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope;

const PRINTER = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** A declared type as written, without its comments (a comment edit is not an API change), on one line. */
function printed(node: ts.Node): string {
  return PRINTER.printNode(ts.EmitHint.Unspecified, node, node.getSourceFile()).replace(/\s+/g, ' ').trim();
}

function membersOf(checker: ts.TypeChecker, type: ts.Type, at: ts.Node): string[] {
  const lines: string[] = [];
  for (const prop of checker.getPropertiesOfType(type)) {
    if (prop.name.startsWith('#') || isInternal(prop)) continue;
    const decl = prop.valueDeclaration ?? prop.declarations?.[0];
    // Members inherited from the platform (Error's stack, captureStackTrace…) vary with @types/node.
    if (decl && isExternal(decl.getSourceFile())) continue;
    const modifiers = decl ? ts.getCombinedModifierFlags(decl) : ts.ModifierFlags.None;
    if (modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
    const optional = prop.flags & ts.SymbolFlags.Optional ? '?' : '';
    const readonly = modifiers & ts.ModifierFlags.Readonly ? 'readonly ' : '';
    lines.push(
      `${readonly}${symbolName(prop)}${optional}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(prop, at), at, FORMAT)}`,
    );
  }
  return lines.sort();
}

function signatureOf(checker: ts.TypeChecker, symbol: ts.Symbol, kind: string): string {
  const decl = symbol.declarations?.[0];
  if (!decl) return '';
  switch (kind) {
    case 'type': {
      const node = decl as ts.TypeAliasDeclaration;
      const params = node.typeParameters ? `<${node.typeParameters.map((p) => printed(p)).join(', ')}>` : '';
      return `${params} = ${printed(node.type)}`;
    }
    case 'interface': {
      const node = decl as ts.InterfaceDeclaration;
      const params = node.typeParameters ? `<${node.typeParameters.map((p) => printed(p)).join(', ')}>` : '';
      const members = membersOf(checker, checker.getDeclaredTypeOfSymbol(symbol), decl);
      return `${params} { ${members.join('; ')} }`;
    }
    case 'class': {
      const statics = checker.getTypeOfSymbolAtLocation(symbol, decl);
      const ctors = statics.getConstructSignatures().map((s) => `new ${checker.signatureToString(s, decl, FORMAT)}`);
      const staticMembers = membersOf(checker, statics, decl)
        .filter((m) => !m.startsWith('prototype:'))
        .map((m) => `static ${m}`);
      const members = membersOf(checker, checker.getDeclaredTypeOfSymbol(symbol), decl);
      return `{ ${[...ctors, ...staticMembers, ...members].join('; ')} }`;
    }
    case 'namespace': {
      const members = checker
        .getExportsOfModule(symbol)
        .map((m) => {
          const t = m.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(m) : m;
          const k = kindOf(t);
          return `${k} ${m.name}${signatureOf(checker, t, k).replace(/^(?=[^:\s])/, ' ')}`;
        })
        .sort();
      return ` { ${members.join('; ')} }`;
    }
    default:
      return `: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, decl), decl, FORMAT)}`;
  }
}

/** Builds the report of every entry point, in memory. */
export function buildApiReport(root: string = REPO_ROOT): ApiEntryReport[] {
  const entries = readEntryPoints(root);
  const program = createProgram(
    root,
    entries.map((e) => e.source),
  );
  const checker = program.getTypeChecker();
  return entries.map((entry) => {
    const file = program.getSourceFile(join(root, entry.source));
    if (!file) throw new Error(`${entry.source} (exports of ${entry.specifier}) is not in the program`);
    const moduleSymbol = checker.getSymbolAtLocation(file);
    if (!moduleSymbol) throw new Error(`${entry.source} is not a module`);
    const names: ApiName[] = [];
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (isInternal(target)) continue;
      const kind = kindOf(target);
      names.push({
        name: exported.name,
        kind,
        signature: stableText(signatureOf(checker, target, kind).split(root).join('<root>')),
      });
    }
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { entry, names, text: renderEntry(entry, names) };
  });
}

function renderEntry(entry: EntryPoint, names: readonly ApiName[]): string {
  const lines = [
    `# API report: \`${entry.specifier}\``,
    '',
    `Generated from \`${entry.source}\` by \`${UPDATE_COMMAND}\`; do not edit by hand.`,
    `${names.length} exported names.`,
    '',
    '```ts',
    ...names.map(
      (n) =>
        `${n.kind} ${n.name}${n.signature.startsWith(':') || n.signature.startsWith(' =') ? '' : ' '}${n.signature}`,
    ),
    '```',
    '',
  ];
  return lines.join('\n');
}

/** The committed report files, by file name. */
export function readCommittedReport(dir: string = API_DIR): Map<string, string> {
  const files = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return files; // no api/ yet: every entry shows as not committed
  }
  for (const name of names.filter((n) => n.endsWith('.api.md')).sort())
    files.set(name, readFileSync(join(dir, name), 'utf8'));
  return files;
}

/**
 * What differs between the committed files and the generated ones, per file: the lines only in the
 * committed one (`- `) and only in the generated one (`+ `), in file order. Empty when equal.
 */
export function reportDiff(committed: ReadonlyMap<string, string>, generated: ReadonlyMap<string, string>): string {
  const out: string[] = [];
  for (const name of [...new Set([...committed.keys(), ...generated.keys()])].sort()) {
    const before = committed.get(name);
    const after = generated.get(name);
    if (before === after) continue;
    if (before === undefined) {
      out.push(`api/${name}: not committed`);
      continue;
    }
    if (after === undefined) {
      out.push(`api/${name}: committed but no entry point generates it`);
      continue;
    }
    const beforeLines = before.split('\n');
    const afterLines = after.split('\n');
    const afterSet = new Set(afterLines);
    const beforeSet = new Set(beforeLines);
    out.push(`--- api/${name}`);
    for (const line of beforeLines) if (!afterSet.has(line)) out.push(`- ${line}`);
    for (const line of afterLines) if (!beforeSet.has(line)) out.push(`+ ${line}`);
  }
  return out.join('\n');
}

function main(): void {
  const reports = buildApiReport();
  if (process.argv.includes('--count')) {
    for (const r of reports) console.log(`${r.entry.specifier}\t${r.names.length}`);
    return;
  }
  rmSync(API_DIR, { recursive: true, force: true });
  mkdirSync(API_DIR, { recursive: true });
  for (const r of reports) writeFileSync(join(API_DIR, r.entry.reportFile), r.text);
  console.log(
    `wrote ${reports.length} files to api/: ${reports.map((r) => `${r.entry.specifier} (${r.names.length})`).join(', ')}`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
