/**
 * Fuzz (issue 18): random kubeconfig shapes, as YAML or JSON text and as objects, fed to the
 * loader (`parseKubeconfig`, `asKubeconfig`, `resolveKubeconfig`). Whatever the input, it may only
 * fail with the library's own errors, never hang, and never quote a credential: every credential
 * field holds a known marker (`S3CR3T…`) that must not appear in an error or a printed config.
 * Seeded (`FUZZ_SEED=<n>` replays a run) and bounded in time (`FUZZ_TIME_MS`, per property).
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { CredentialError } from './credentials.js';
import { OperatorRuntimeError } from '../core/errors.js';
import {
  DEFAULT_MAX_KUBECONFIG_BYTES,
  DEFAULT_MAX_KUBECONFIG_DEPTH,
  KubeconfigError,
  KubeconfigLimitError,
  asKubeconfig,
  parseKubeconfig,
  resolveKubeconfig,
  type Kubeconfig,
} from './kubeconfig.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const TIME_MS = Number(process.env.FUZZ_TIME_MS ?? 2500);
/** One run that takes longer than this is a hang (the loader only reads small local files). */
const RUN_TIMEOUT_MS = 2000;
const MARK = 'S3CR3T';
let dir: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'kc-fuzz-'));
  await writeFile(path.join(dir, 'ca.crt'), 'CA-PEM');
  await writeFile(path.join(dir, 'token'), `${MARK}-from-file`);
  await mkdir(path.join(dir, 'a-directory'));
});

const secret = fc.nat().map((n) => `${MARK}${n.toString(36)}z`);
const b64 = (s: string): string => Buffer.from(s).toString('base64');
// Paths inside the fuzz folder only: an existing file, a missing one, a directory, a relative one.
const filePath = fc.constantFrom('ca.crt', 'missing.crt', 'a-directory', './token', '');
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined });

/** A plausible kubeconfig: the fields client-go knows, each either well-typed or anything at all. */
const kubeconfigArb = fc
  .record({
    cluster: fc.record(
      {
        server: fc.oneof(
          fc.constantFrom('https://h:6443', 'http://10.0.0.1:8080/prefix', 'not a url', ''),
          secret.map((s) => `https://u:${s}@h:1`),
          fc.anything(),
        ),
        'certificate-authority-data': fc.oneof(fc.constant(b64('CA')), fc.string(), fc.anything()),
        'certificate-authority': fc.oneof(filePath, fc.anything()),
        'insecure-skip-tls-verify': fc.oneof(fc.boolean(), fc.anything()),
        'tls-server-name': fc.oneof(fc.string(), fc.anything()),
        'proxy-url': fc.oneof(
          secret.map((s) => `http://u:${s}@proxy:3128`),
          secret.map((s) => `socks5://u:${s}@p:1`),
          fc.anything(),
        ),
      },
      { requiredKeys: [] },
    ),
    user: fc.record(
      {
        token: fc.oneof(
          secret,
          secret.map((s) => ({ nested: s })),
          secret.map((s) => [s]),
        ),
        tokenFile: fc.oneof(filePath, fc.anything()),
        username: fc.oneof(fc.string(), fc.anything()),
        password: fc.oneof(
          secret,
          secret.map((s) => [s]),
        ),
        'client-certificate-data': fc.oneof(fc.constant(b64('CERT')), fc.anything()),
        'client-key-data': fc.oneof(
          secret.map(b64),
          secret,
          secret.map((s) => `%${s}`),
        ),
        'client-key': fc.oneof(filePath, fc.anything()),
        'as-groups': fc.oneof(fc.array(fc.string()), fc.anything()),
        'auth-provider': fc.oneof(
          secret.map((s) => ({ name: 'oidc', config: { 'id-token': s, 'access-token': s, 'client-secret': s } })),
          secret.map((s) => ({ name: 'gcp', config: { 'access-token': [s] } })),
          fc.anything(),
        ),
        exec: fc.record(
          {
            command: fc.oneof(fc.constantFrom('plugin', './bin/plugin', '/usr/bin/plugin'), fc.anything()),
            apiVersion: fc.oneof(
              fc.constantFrom('client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'),
              fc.anything(),
            ),
            args: fc.oneof(
              secret.map((s) => [`--token=${s}`]),
              secret.map((s) => `--token=${s}`),
              secret.map((s) => ['--ok', { v: s }]),
            ),
            env: fc.oneof(
              secret.map((s) => [{ name: 'PASS', value: s }]),
              secret.map((s) => [{ name: 'PASS', value: { v: s } }]),
              secret.map((s) => ({ PASS: s })),
              secret.map((s) => [s]),
            ),
            interactiveMode: fc.oneof(fc.constantFrom('Never', 'IfAvailable', 'Always'), fc.anything()),
            provideClusterInfo: fc.oneof(fc.boolean(), fc.anything()),
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    ),
    namespace: maybe(fc.oneof(fc.string(), fc.anything())),
    currentContext: fc.oneof(fc.constant('ctx'), fc.anything()),
    contextUser: fc.oneof(fc.constant('u'), fc.constant(undefined), fc.anything()),
  })
  .map(({ cluster, user, namespace, currentContext, contextUser }): Record<string, unknown> => ({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': currentContext,
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: contextUser, namespace } }],
  }));

/** Every path into a plain value, so a mutation can reach any depth. */
function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((item, i) => paths(item, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, item] of Object.entries(v)) paths(item, [...at, k], out);
  return out;
}

/** A copy of `root` with the value at `at` replaced (or deleted when `value` is the DELETE marker). */
function mutate(root: unknown, at: (string | number)[], value: unknown): unknown {
  if (at.length === 0) return value === DELETE ? undefined : value;
  const copy = (Array.isArray(root) ? [...(root as unknown[])] : { ...(root as Record<string, unknown>) }) as Record<
    string | number,
    unknown
  >;
  const [head, ...rest] = at as [string | number, ...(string | number)[]];
  if (rest.length === 0 && value === DELETE) delete copy[head];
  else copy[head] = mutate(copy[head], rest, value);
  return copy;
}
const DELETE = Symbol('delete');

/** A valid-looking kubeconfig with one subtree anywhere replaced by a random value or removed. */
const mutatedArb = fc
  .tuple(kubeconfigArb, fc.nat(), fc.oneof(fc.anything(), fc.constant<typeof DELETE>(DELETE)))
  .map(([kc, pick, value]) => {
    const all = paths(kc);
    return mutate(kc, all[pick % all.length]!, value);
  });

/** Text the YAML parser sees: YAML or JSON of a (mutated) shape, or garbage, or YAML with garbage spliced in. */
const textArb = fc.oneof(
  mutatedArb.map((kc) => stringify(kc)),
  mutatedArb.map((kc) => JSON.stringify(kc) ?? 'null'),
  fc.string(),
  fc.tuple(kubeconfigArb, fc.nat(), fc.string()).map(([kc, at, junk]) => {
    const text = stringify(kc);
    const i = at % (text.length + 1);
    return text.slice(0, i) + junk + text.slice(i);
  }),
  fc.anything().map((v) => stringify(v)),
);

/** The loader's contract for one input: our errors only, no marker in what it says or prints. */
function checkError(e: unknown): void {
  assert.ok(
    e instanceof KubeconfigError || e instanceof KubeconfigLimitError || e instanceof CredentialError,
    `only the library's errors: got ${inspect(e)}`,
  );
  const text = `${e.message}\n${inspect(e, { depth: 10 })}`;
  assert.ok(!text.includes(MARK), `no credential in the error: ${e.message}`);
}

async function load(run: () => Promise<unknown>): Promise<void> {
  try {
    const cfg = await run();
    const printed = `${inspect(cfg, { depth: 10 })}\n${JSON.stringify(cfg)}`;
    assert.ok(!printed.includes(MARK), `no credential in a printed config: ${printed}`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    checkError(e);
  }
}

// The YAML parser reports some oddities (unknown tags) as process warnings that quote the source.
const warnings: string[] = [];
process.on('warning', (w) => warnings.push(`${w.name}: ${w.message}`));

async function fuzz<T>(name: string, arb: fc.Arbitrary<T>, body: (input: T) => Promise<void>): Promise<void> {
  let runs = 0;
  const property = fc.asyncProperty(arb, async (input) => {
    runs++;
    await body(input);
  });
  try {
    await fc.assert(property, {
      seed: SEED,
      numRuns: 1_000_000,
      interruptAfterTimeLimit: TIME_MS,
      timeout: RUN_TIMEOUT_MS,
    });
  } catch (e) {
    console.log(
      `# ${name}: failed with FUZZ_SEED=${SEED} (replay: FUZZ_SEED=${SEED} node --import tsx --test ${path.relative(process.cwd(), import.meta.filename)})`,
    );
    throw e;
  }
  console.log(`# ${name}: ${runs} runs in ${TIME_MS} ms, seed ${SEED}`);
  // A fuzz that never got to run proves nothing.
  assert.ok(runs >= 20, `only ${runs} runs`);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(
    warnings.filter((w) => w.includes(MARK)),
    [],
    `no credential in a process warning (FUZZ_SEED=${SEED})`,
  );
}

test('kubeconfig text of any shape fails only with KubeconfigError/CredentialError and never quotes a credential', async () => {
  await fuzz('text', textArb, async (text) => {
    await load(async () => resolveKubeconfig(parseKubeconfig(text, dir), { env: {} }));
  });
});

test("kubeconfig objects of any shape fail only with the library's errors, and a resolved config never prints a credential", async () => {
  await fuzz('objects', mutatedArb, async (kc) => {
    await load(async () => resolveKubeconfig(asKubeconfig(kc as object), { env: {} }));
    // Straight to resolve, as a typed caller with a cast would.
    await load(async () => resolveKubeconfig(kc as Kubeconfig, { env: {} }));
  });
});

/**
 * Hostile text (issue 35): what the limits exist for. Each input knows what it is (its oracle is
 * its construction, not the scanner): over the size limit, nested deeper than the depth limit
 * outside any quote, or neither. The first two must be refused by that limit, by name.
 */
type Hostile = { readonly text: string; readonly expect: 'maxBytes' | 'maxDepth' | undefined };

const open = fc.constantFrom('[', '{a: ', '- ', '{"a": ');
const nested = fc
  .tuple(fc.array(open, { minLength: 1, maxLength: 120 }), fc.constantFrom('', 'x', ']]]]', '"]]]"', "'}}}'"))
  .map(([opens, leaf]): Hostile => {
    // Block indicators only nest at the start of the document or after one another.
    const flowStart = opens.findIndex((o) => o !== '- ');
    const text = `x:\n  ${opens.join('')}${leaf}`;
    // Levels: the root mapping, each opener (a block `- ` once flow has started is a scalar character).
    const levels = 1 + opens.filter((o, i) => o !== '- ' || flowStart === -1 || i < flowStart).length;
    return { text, expect: levels > DEFAULT_MAX_KUBECONFIG_DEPTH + 1 ? 'maxDepth' : undefined };
  });
const quotedNesting = fc
  .tuple(fc.nat({ max: 5000 }), fc.constantFrom('"', "'"))
  .map(([n, q]): Hostile => ({ text: `x: ${q}${'['.repeat(n)}${q}\n`, expect: undefined }));
const manyKeys = fc
  .nat({ max: 30_000 })
  .map((n): Hostile => ({ text: Array.from({ length: n }, (_, i) => `k${i}: ${i}\n`).join(''), expect: undefined }));
const huge = fc
  .tuple(fc.constantFrom('[', 'a: b\n', '- ', '# c\n', '*a, ', 'A'), fc.integer({ min: 256, max: 1536 }))
  .map(([unit, kib]): Hostile => {
    const text = `x: ${unit.repeat(Math.ceil((kib * 1024) / unit.length))}`;
    return { text, expect: text.length > DEFAULT_MAX_KUBECONFIG_BYTES ? 'maxBytes' : undefined };
  });
const truncated = fc.tuple(kubeconfigArb, fc.boolean(), fc.nat()).map(([kc, json, at]): Hostile => {
  const text = json ? JSON.stringify(kc) : stringify(kc);
  return { text: text.slice(0, at % (text.length + 1)), expect: undefined };
});
const randomText = fc
  .oneof(fc.string(), fc.string({ unit: 'binary' }))
  .map((text): Hostile => ({ text, expect: undefined }));

test('hostile kubeconfig text (nested, huge, many keys, truncated, random) is parsed or refused with a named error, in bounded time', async () => {
  await fuzz(
    'hostile',
    fc.oneof(nested, quotedNesting, manyKeys, huge, truncated, randomText),
    async ({ text, expect }) => {
      const started = performance.now();
      let error: unknown;
      try {
        parseKubeconfig(text, dir);
      } catch (e) {
        error = e;
      }
      const ms = performance.now() - started;
      assert.ok(ms < RUN_TIMEOUT_MS, `${text.length} bytes took ${ms.toFixed(0)} ms`);
      if (error !== undefined) {
        assert.ok(
          error instanceof OperatorRuntimeError && /^ERR_/.test(error.code),
          `a named refusal: ${inspect(error)}`,
        );
        checkError(error);
      }
      if (expect) {
        assert.ok(error instanceof KubeconfigLimitError, `refused by ${expect}: got ${inspect(error)}`);
        assert.equal(error.limit, expect);
      }
    },
  );
});
