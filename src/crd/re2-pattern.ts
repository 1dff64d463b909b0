/**
 * A CRD's `pattern` is compiled by the API server with Go's `regexp` (RE2 syntax), and checked by
 * `validateAgainstSchema` with a JavaScript RegExp. The two dialects differ: RE2 has no lookaround
 * or backreferences (the server rejects the CRD), and shares syntax with different meanings (`\s`,
 * `.`, `\pL`, `\Q…\E`, escaped punctuation). This reads the pattern once, refuses what RE2 cannot
 * compile, and writes the JavaScript RegExp that matches what RE2 matches — or refuses what it
 * cannot translate faithfully (Unicode classes, whose tables differ between Go and Node versions),
 * so the validator never silently disagrees with the server.
 */

export type PatternResult =
  { readonly ok: true; readonly regexp: RegExp } | { readonly ok: false; readonly why: string };

/** RE2's limit on `{n,m}` counts. */
const MAX_REPEAT = 1000;
/** The characters RE2's `\s` matches (Perl's, ASCII only; JavaScript's `\s` also matches Unicode spaces). */
const SPACE = '\\t\\n\\f\\r ';
const POSIX_CLASSES: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};
/** Escapes RE2 and JavaScript (with the `u` flag) read the same way. */
const SAME_ESCAPES = new Set(['d', 'D', 'w', 'W', 'b', 'B', 'f', 't', 'n', 'r', 'v']);

class Refused extends Error {}

/** Whether Go's RE2 compiles `pattern`, and the JavaScript RegExp that matches the same strings. */
export function translateRe2Pattern(pattern: string): PatternResult {
  try {
    const { source, flags } = new Translator(pattern).run();
    try {
      return { ok: true, regexp: new RegExp(source, `u${flags}`) };
    } catch (e) {
      return {
        ok: false,
        why: `operator-runtime cannot check this pattern in JavaScript the way the API server does (${(e as Error).message})`,
      };
    }
  } catch (e) {
    if (e instanceof Refused) return { ok: false, why: e.message };
    throw e;
  }
}

class Translator {
  private i = 0;
  private out = '';
  private depth = 0;
  private readonly flags = new Set<string>();

  constructor(private readonly p: string) {}

  run(): { source: string; flags: string } {
    this.leadingFlags();
    let atomEnd = false; // whether the last thing written can take a quantifier
    while (this.i < this.p.length) {
      const c = this.p[this.i]!;
      if (c === '(') {
        this.group();
        atomEnd = false;
      } else if (c === ')') {
        if (this.depth === 0) throw new Refused('unbalanced ) (RE2: unexpected ))');
        this.depth--;
        this.out += ')';
        this.i++;
        atomEnd = true;
      } else if (c === '[') {
        this.charClass();
        atomEnd = true;
      } else if (c === '\\') {
        atomEnd = this.escape();
      } else if (c === '*' || c === '+' || c === '?' || (c === '{' && this.repeatAt(this.i))) {
        if (!atomEnd) throw new Refused(`missing argument to repetition operator ${c} at offset ${this.i} (RE2)`);
        this.quantifier();
        atomEnd = false;
      } else if (c === '.') {
        this.out += this.flags.has('s') ? '[\\s\\S]' : '[^\\n]';
        this.i++;
        atomEnd = true;
      } else if (c === '|') {
        this.out += '|';
        this.i++;
        atomEnd = false;
      } else if (c === '^' || c === '$') {
        this.out += c;
        this.i++;
        atomEnd = true; // RE2 allows `^*` (a no-op repeat); JavaScript does not, caught below
      } else {
        this.literal(this.codePointAt());
        atomEnd = true;
      }
    }
    if (this.depth !== 0) throw new Refused('missing closing ) (RE2)');
    return { source: this.out, flags: [...this.flags].join('') };
  }

  /** `(?i)` at the start applies to the whole pattern: JavaScript's flags. Elsewhere, RE2 scopes it. */
  private leadingFlags(): void {
    const m = /^\(\?([imsU]+)\)/.exec(this.p);
    if (!m) return;
    for (const f of m[1]!) {
      if (f === 'U')
        throw new Refused('the (?U) flag (ungreedy) has no JavaScript equivalent; write lazy quantifiers (*?) instead');
      this.flags.add(f);
    }
    this.i = m[0].length;
  }

  private group(): void {
    const rest = this.p.slice(this.i);
    if (rest.startsWith('(?=') || rest.startsWith('(?!'))
      throw new Refused(
        `lookahead ${rest.slice(0, 3)} at offset ${this.i}: Go's RE2 does not support it (the API server rejects the CRD)`,
      );
    if (rest.startsWith('(?<=') || rest.startsWith('(?<!'))
      throw new Refused(
        `lookbehind ${rest.slice(0, 4)} at offset ${this.i}: Go's RE2 does not support it (the API server rejects the CRD)`,
      );
    if (rest.startsWith('(?>')) throw new Refused(`atomic group (?> at offset ${this.i}: Go's RE2 does not support it`);
    if (rest.startsWith('(?P='))
      throw new Refused(`backreference (?P= at offset ${this.i}: Go's RE2 does not support backreferences`);
    if (rest.startsWith('(?#'))
      throw new Refused(`comment group (?# at offset ${this.i}: Go's RE2 does not support it`);
    const named = /^\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
    if (named) {
      this.out += `(?<${named[1]}>`;
      this.i += named[0].length;
    } else if (rest.startsWith('(?<')) {
      throw new Refused(
        `named group (?<name> at offset ${this.i}: Go's RE2 before Go 1.22 (the Kubernetes servers this supports) only reads (?P<name>…)`,
      );
    } else if (rest.startsWith('(?:')) {
      this.out += '(?:';
      this.i += 3;
    } else if (rest.startsWith('(?')) {
      throw new Refused(
        `flags group ${/^\(\?[^)]*\)?/.exec(rest)?.[0] ?? '(?'} at offset ${this.i}: only leading flags ((?i) at the start) can be checked the way RE2 reads them`,
      );
    } else {
      this.out += '(';
      this.i++;
    }
    this.depth++;
  }

  /** `{n}`, `{n,}`, `{n,m}` at `at`; anything else starting with `{` is a literal in RE2. */
  private repeatAt(at: number): RegExpExecArray | null {
    return /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(at));
  }

  private quantifier(): void {
    const c = this.p[this.i]!;
    if (c === '{') {
      const m = this.repeatAt(this.i)!;
      const min = Number(m[1]);
      const max = m[3] === undefined || m[3] === '' ? min : Number(m[3]);
      if (min > MAX_REPEAT || max > MAX_REPEAT)
        throw new Refused(`repeat count ${m[0]} exceeds RE2's limit of ${MAX_REPEAT}`);
      if (m[3] !== undefined && m[3] !== '' && max < min) throw new Refused(`invalid repeat count ${m[0]} (RE2)`);
      this.out += m[0];
      this.i += m[0].length;
    } else {
      this.out += c;
      this.i++;
    }
    if (this.p[this.i] === '?') {
      this.out += '?';
      this.i++;
    }
    const next = this.p[this.i];
    if (next === '*' || next === '+' || next === '?' || (next === '{' && this.repeatAt(this.i))) {
      throw new Refused(
        `nested repetition operator at offset ${this.i}${next === '+' ? ' (possessive quantifiers are not supported by RE2)' : ''}: Go's RE2 rejects it`,
      );
    }
  }

  /** An escape outside a class; returns whether it can take a quantifier. */
  private escape(): boolean {
    const c = this.p[this.i + 1];
    if (c === undefined) throw new Refused('trailing backslash (RE2)');
    if (c >= '1' && c <= '9')
      throw new Refused(
        `backreference \\${c} at offset ${this.i}: Go's RE2 does not support backreferences (the API server rejects the CRD)`,
      );
    if (c === 'b' || c === 'B') {
      this.out += `\\${c}`;
      this.i += 2;
      return false;
    }
    if (c === 'A' || c === 'z') {
      if (this.flags.has('m')) throw new Refused(`\\${c} with the m flag has no JavaScript equivalent`);
      this.out += c === 'A' ? '^' : '$';
      this.i += 2;
      return false;
    }
    if (c === 'Q') {
      const end = this.p.indexOf('\\E', this.i + 2);
      const text = this.p.slice(this.i + 2, end === -1 ? undefined : end);
      for (const ch of text) this.literal(ch.codePointAt(0)!);
      this.i = end === -1 ? this.p.length : end + 2;
      return true;
    }
    if (c === 's' || c === 'S') {
      this.out += c === 's' ? `[${SPACE}]` : `[^${SPACE}]`;
      this.i += 2;
      return true;
    }
    this.out += this.classEscape(false);
    return true;
  }

  /** Escapes valid both inside and outside a class; advances past them. */
  private classEscape(inClass: boolean): string {
    const c = this.p[this.i + 1];
    if (c === undefined) throw new Refused('trailing backslash (RE2)');
    if (SAME_ESCAPES.has(c) && !(inClass && (c === 'b' || c === 'B'))) {
      this.i += 2;
      return `\\${c}`;
    }
    if (inClass && c === 's') {
      this.i += 2;
      return SPACE;
    }
    if (c === 'a') {
      this.i += 2;
      return '\\x07';
    }
    if (c === 'x') {
      const braced = /^\\x\{([0-9A-Fa-f]{1,6})\}/.exec(this.p.slice(this.i));
      const short = /^\\x([0-9A-Fa-f]{2})/.exec(this.p.slice(this.i));
      const m = braced ?? short;
      if (!m) throw new Refused(`invalid escape \\x at offset ${this.i} (RE2)`);
      const code = parseInt(m[1]!, 16);
      if (code > 0x10ffff) throw new Refused(`escape ${m[0]} is beyond Unicode (RE2)`);
      this.i += m[0].length;
      return `\\u{${code.toString(16)}}`;
    }
    if (c === 'p' || c === 'P') {
      // Seen in crd.oracle.int.test.ts: CJK Extension H letters (Unicode 15) match \pL in Node and not
      // in kube-apiserver 1.20 (Go 1.19, Unicode 13). No translation can make the two agree.
      throw new Refused(
        `Unicode class \\${c} at offset ${this.i}: the API server's Go and Node ship different Unicode versions, so the two would disagree on newer characters; write the ranges out ([a-zA-Z\\x{00C0}-\\x{024F}])`,
      );
    }
    if (/[0-9]/.test(c))
      throw new Refused(
        `escape \\${c} at offset ${this.i}: backreferences and octal escapes are not supported (Go's RE2)`,
      );
    if (/[A-Za-z]/.test(c))
      throw new Refused(
        `escape \\${c} at offset ${this.i} is not valid in Go's RE2${c === 'u' ? ' (write \\x{00e9}, not \\u00e9)' : ''}${c === 'Z' ? ' (write \\z)' : ''}`,
      );
    // Escaped punctuation is a literal in RE2; JavaScript's u flag allows only some escapes.
    this.i += 2;
    return `\\u{${c.codePointAt(0)!.toString(16)}}`;
  }

  private charClass(): void {
    let s = '[';
    this.i++;
    if (this.p[this.i] === '^') {
      s += '^';
      this.i++;
    }
    let first = true;
    for (;;) {
      const c = this.p[this.i];
      if (c === undefined) throw new Refused('missing closing ] (RE2)');
      if (c === ']' && !first) break;
      first = false;
      if (c === '[' && this.p[this.i + 1] === ':') {
        const m = /^\[:(\^?)([a-z]+):\]/.exec(this.p.slice(this.i));
        if (m) {
          const chars = POSIX_CLASSES[m[2]!];
          if (!chars) throw new Refused(`invalid character class [:${m[2]}:] (RE2)`);
          if (m[1]) throw new Refused(`negated POSIX class ${m[0]} has no JavaScript equivalent inside a class`);
          s += chars;
          this.i += m[0].length;
          continue;
        }
      }
      if (c === '\\') {
        const next = this.p[this.i + 1];
        if (next === 'S' || next === 'D' || next === 'W' || next === 'P') {
          if (next === 'S')
            throw new Refused(
              '\\S inside a character class has no faithful JavaScript equivalent; write the class out',
            );
        }
        s += this.classEscape(true);
        continue;
      }
      const code = this.codePointAt();
      s += /[\w\-^ ]/u.test(String.fromCodePoint(code)) ? String.fromCodePoint(code) : `\\u{${code.toString(16)}}`;
    }
    this.i++;
    this.out += `${s}]`;
  }

  private codePointAt(): number {
    const code = this.p.codePointAt(this.i)!;
    this.i += code > 0xffff ? 2 : 1;
    return code;
  }

  private literal(code: number): void {
    const ch = String.fromCodePoint(code);
    this.out += /[\w ]/u.test(ch) || code > 0x7f ? ch : `\\u{${code.toString(16)}}`;
  }
}
