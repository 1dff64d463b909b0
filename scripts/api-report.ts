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
      // An interface with a constant of its name (`new Manager(options)`): how it is built is public too.
      const ctors =
        symbol.flags & ts.SymbolFlags.Variable && symbol.valueDeclaration
          ? publicConstructors(checker, checker.getTypeOfSymbolAtLocation(symbol, symbol.valueDeclaration), decl)
          : [];
      return `${params} { ${[...ctors, ...members].join('; ')} }`;
    }
    case 'class': {
      const statics = checker.getTypeOfSymbolAtLocation(symbol, decl);
      const ctors = publicConstructors(checker, statics, decl);
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

/**
 * A type of ours that a public declaration names but no entry point exports (api-extractor's
 * "forgotten export"): a user can receive or pass it but cannot write its name.
 */
export interface UnexportedType {
  readonly name: string;
  /** Where it is declared, relative to the repository root. */
  readonly declaredIn: string;
  /** The exported names (`specifier:name`) whose declarations name it, directly or through another such type. */
  readonly usedBy: readonly string[];
}

export interface ApiSurface {
  readonly reports: readonly ApiEntryReport[];
  readonly unexported: readonly UnexportedType[];
}

const resolveAlias = (checker: ts.TypeChecker, symbol: ts.Symbol): ts.Symbol =>
  symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;

/** Builds the report of every entry point, in memory. */
export function buildApiReport(root: string = REPO_ROOT): ApiEntryReport[] {
  return [...buildApiSurface(root).reports];
}

/** The report of every entry point and the types its declarations name without exporting them, in memory. */
export function buildApiSurface(root: string = REPO_ROOT): ApiSurface {
  const entries = readEntryPoints(root);
  const program = createProgram(
    root,
    entries.map((e) => e.source),
  );
  const checker = program.getTypeChecker();
  const publicSymbols = new Map<ts.Symbol, string>(); // target → `specifier:name` of its first export
  const reports = entries.map((entry) => {
    const file = program.getSourceFile(join(root, entry.source));
    if (!file) throw new Error(`${entry.source} (exports of ${entry.specifier}) is not in the program`);
    const moduleSymbol = checker.getSymbolAtLocation(file);
    if (!moduleSymbol) throw new Error(`${entry.source} is not a module`);
    const names: ApiName[] = [];
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const target = resolveAlias(checker, exported);
      if (isInternal(target)) continue;
      const kind = kindOf(target);
      if (!publicSymbols.has(target)) publicSymbols.set(target, `${entry.specifier}:${exported.name}`);
      // A namespace export (`export * as predicates`) makes its members public too.
      if (kind === 'namespace')
        for (const member of checker.getExportsOfModule(target)) {
          const t = resolveAlias(checker, member);
          if (!publicSymbols.has(t)) publicSymbols.set(t, `${entry.specifier}:${exported.name}.${member.name}`);
        }
      names.push({
        name: exported.name,
        kind,
        signature: stableText(signatureOf(checker, target, kind).split(root).join('<root>')),
      });
    }
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { entry, names, text: renderEntry(entry, names) };
  });
  return { reports, unexported: unexportedTypes(checker, root, publicSymbols) };
}

/** The construct signatures of a class or constructor type, less those marked @internal. */
function publicConstructors(checker: ts.TypeChecker, statics: ts.Type, decl: ts.Declaration): string[] {
  return statics
    .getConstructSignatures()
    .filter((s) => !s.declaration || ts.isFunctionTypeNode(s.declaration) || isPublicMember(s.declaration))
    .map((s) => `new ${checker.signatureToString(s, decl, FORMAT)}`);
}

/** Whether a class member or interface member is part of the public shape (not private, protected, `#x` or @internal). */
function isPublicMember(member: ts.Node): boolean {
  const name = (member as { name?: ts.Node }).name;
  if (name && ts.isPrivateIdentifier(name)) return false;
  if (ts.getCombinedModifierFlags(member as ts.Declaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected))
    return false;
  // From the text before it (its JSDoc): the compiler API parses no JSDoc tags of .ts files by default.
  const leading = member.getSourceFile().text.slice(member.pos, member.getStart());
  return !/\/\*\*(?:(?!\*\/)[\s\S])*@internal\b/.test(leading);
}

/**
 * The type annotations that make up a declaration's public shape: parameters, return types, property
 * and member types, heritage clauses, type parameters' constraints and defaults. Bodies and
 * initializers are left out (an inferred type has no name to forget).
 */
function publicTypeNodes(decl: ts.Declaration): ts.Node[] {
  const out: ts.Node[] = [];
  const push = (n: ts.Node | undefined): void => {
    if (n) out.push(n);
  };
  const typeParams = (d: { typeParameters?: ts.NodeArray<ts.TypeParameterDeclaration> }): void => {
    for (const p of d.typeParameters ?? []) {
      push(p.constraint);
      push(p.default);
    }
  };
  const signature = (d: ts.SignatureDeclarationBase): void => {
    typeParams(d);
    for (const p of d.parameters) push(p.type);
    push(d.type);
  };
  const heritage = (d: ts.ClassLikeDeclaration | ts.InterfaceDeclaration): void => {
    for (const clause of d.heritageClauses ?? []) for (const t of clause.types) push(t);
  };
  if (ts.isFunctionDeclaration(decl)) signature(decl);
  else if (ts.isVariableDeclaration(decl)) push(decl.type);
  else if (ts.isTypeAliasDeclaration(decl)) {
    typeParams(decl);
    push(decl.type);
  } else if (ts.isInterfaceDeclaration(decl)) {
    typeParams(decl);
    heritage(decl);
    for (const m of decl.members) if (isPublicMember(m)) out.push(m);
  } else if (ts.isClassDeclaration(decl)) {
    typeParams(decl);
    heritage(decl);
    for (const m of decl.members) {
      if (!isPublicMember(m)) continue;
      if (ts.isConstructorDeclaration(m)) {
        for (const p of m.parameters) if (isPublicMember(p) || !ts.isParameterPropertyDeclaration(p, m)) push(p.type);
      } else if (ts.isMethodDeclaration(m) || ts.isGetAccessorDeclaration(m) || ts.isSetAccessorDeclaration(m))
        signature(m);
      else if (ts.isPropertyDeclaration(m) || ts.isIndexSignatureDeclaration(m)) push(m.type);
    }
  }
  return out;
}

function isTypeOperator(symbol: ts.Symbol): boolean {
  return (symbol.declarations ?? []).some((d) => ts.isTypeAliasDeclaration(d) && (d.typeParameters?.length ?? 0) > 0);
}

/** Every type of ours reachable from a public declaration that no entry exports, sorted by name. */
function unexportedTypes(
  checker: ts.TypeChecker,
  root: string,
  publicSymbols: ReadonlyMap<ts.Symbol, string>,
): UnexportedType[] {
  const found = new Map<ts.Symbol, Set<string>>();
  const visited = new Set<ts.Symbol>();
  const queue: Array<{ symbol: ts.Symbol; via: string }> = [...publicSymbols].map(([symbol, via]) => ({
    symbol,
    via,
  }));
  const referenced = (node: ts.Node, via: string): void => {
    let name: ts.Node | undefined;
    if (ts.isTypeReferenceNode(node)) name = node.typeName;
    else if (ts.isExpressionWithTypeArguments(node)) name = node.expression;
    else if (ts.isTypeQueryNode(node)) name = node.exprName;
    if (name) {
      const at = checker.getSymbolAtLocation(name);
      const symbol = at && resolveAlias(checker, at);
      const decl = symbol?.declarations?.[0];
      const file = decl?.getSourceFile();
      if (
        symbol &&
        file &&
        !file.isDeclarationFile &&
        symbol.flags & ts.SymbolFlags.Type &&
        !(symbol.flags & ts.SymbolFlags.TypeParameter) &&
        !publicSymbols.has(symbol) &&
        !isInternal(symbol)
      ) {
        // A generic alias (`Simplify<T>`) is how an exported type is computed, not a type anyone
        // holds a value of: it is walked for what it names, never reported itself.
        if (!isTypeOperator(symbol)) {
          const users = found.get(symbol) ?? new Set<string>();
          users.add(via);
          found.set(symbol, users);
        }
        queue.push({ symbol, via });
      }
    }
    ts.forEachChild(node, (child) => referenced(child, via));
  };
  while (queue.length > 0) {
    const { symbol, via } = queue.shift()!;
    if (visited.has(symbol)) continue;
    visited.add(symbol);
    for (const decl of symbol.declarations ?? []) for (const node of publicTypeNodes(decl)) referenced(node, via);
  }
  return [...found]
    .map(([symbol, users]) => ({
      name: symbol.name,
      declaredIn: symbol.declarations![0]!.getSourceFile().fileName.split(`${root}/`).join(''),
      usedBy: [...users].sort(),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.declaredIn < b.declaredIn ? -1 : 1));
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
  if (process.argv.includes('--unexported')) {
    for (const u of buildApiSurface().unexported)
      console.log(`${u.name}\t${u.declaredIn}\t${u.usedBy.length} uses: ${u.usedBy.join(', ')}`);
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
