import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { InvalidOptionError } from '../core/errors.js';
import {
  DEFAULT_MAX_KUBECONFIG_BYTES,
  KubeconfigError,
  KubeconfigLimitError,
  LOCAL_KUBECONFIG_LIMITS,
  loadKubeconfigFile,
  parseKubeconfig,
  type Kubeconfig,
  type KubeconfigLimitName,
  type KubeconfigLimits,
} from './kubeconfig.js';
import { randomBytes } from 'node:crypto';

const MARK = 'S3CR3T';

/** Parses `text` and expects the refusal of `limit`, without any of the text in the message. */
function refused(text: string, limit: KubeconfigLimitName, limits: KubeconfigLimits = {}): KubeconfigLimitError {
  let caught: unknown;
  try {
    parseKubeconfig(text, '/', limits);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof KubeconfigLimitError, `refused as ${limit}, got ${String(caught)}`);
  assert.equal(caught.code, 'ERR_KUBECONFIG_LIMIT');
  assert.equal(caught.limit, limit);
  assert.ok(caught.message.includes(limit), `the message names the limit: ${caught.message}`);
  assert.ok(caught.message.includes(String(caught.max)), `the message gives the limit's value: ${caught.message}`);
  assert.ok(!caught.message.includes(MARK), 'no content in the message');
  return caught;
}

/** Base64 of a PEM block of `bytes` random bytes, as kubectl writes `*-data` fields. */
const pem = (bytes: number): string =>
  Buffer.from(
    `-----BEGIN CERTIFICATE-----\n${randomBytes(bytes).toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`,
  ).toString('base64');

/** A kubeconfig as a fleet's admin has one: EKS-style names, CAs, exec users and client certificates. */
function bigKubeconfig({
  contexts,
  clusters,
  execUsers = true,
}: {
  contexts: number;
  clusters: number;
  /** Every other user an exec plugin (else every user a client certificate and key). */
  execUsers?: boolean;
}): Kubeconfig {
  const cluster = (i: number): string => `arn:aws:eks:eu-west-1:123456789012:cluster/c-${i}`;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'ctx-0',
    clusters: Array.from({ length: clusters }, (_, i) => ({
      name: cluster(i),
      cluster: { server: `https://ABC${i}.gr7.eu-west-1.eks.amazonaws.com`, 'certificate-authority-data': pem(800) },
    })),
    users: Array.from({ length: clusters }, (_, i) => ({
      name: `u-${i}`,
      user:
        i % 2 || !execUsers
          ? { 'client-certificate-data': pem(900), 'client-key-data': pem(1200) }
          : {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1beta1',
                command: 'aws',
                args: ['--region', 'eu-west-1', 'eks', 'get-token', '--cluster-name', `c-${i}`, '--output', 'json'],
                env: [{ name: 'AWS_PROFILE', value: 'prod' }],
                interactiveMode: 'IfAvailable',
                provideClusterInfo: false,
              },
            },
    })),
    contexts: Array.from({ length: contexts }, (_, i) => ({
      name: `ctx-${i}`,
      context: { cluster: cluster(i % clusters), user: `u-${i % clusters}`, namespace: `team-${i}` },
    })),
  };
}

const keys = (n: number, prefix = MARK): string => Array.from({ length: n }, (_, i) => `${prefix}${i}: 1\n`).join('');

test('a big real kubeconfig passes every default limit, as YAML and as JSON (200 contexts over 50 clusters with base64 certificates)', () => {
  const kc = bigKubeconfig({ contexts: 200, clusters: 50 });
  for (const text of [stringify(kc), JSON.stringify(kc, null, 2), JSON.stringify(kc)]) {
    assert.ok(text.length > 180 * 1024, `big enough to mean something: ${text.length} bytes`);
    const parsed = parseKubeconfig(text, '/');
    assert.equal(parsed.contexts?.length, 200);
    assert.equal(parsed.clusters?.length, 50);
    // Its real depth is well under the limit: 8 levels are enough.
    parseKubeconfig(text, '/', { maxDepth: 8 });
  }
  // The example docs/fleet.md gives: every cluster with its CA, client certificate and key inline.
  const certs = stringify(bigKubeconfig({ contexts: 200, clusters: 40, execUsers: false }));
  assert.ok(certs.length > 230 * 1024, `${certs.length} bytes`);
  assert.equal(parseKubeconfig(certs, '/').users?.length, 40);
  // 1,000 contexts fit under the node limit too.
  parseKubeconfig(stringify(bigKubeconfig({ contexts: 1000, clusters: 5 })), '/');
});

test('regression (issue 35): a kubeconfig over maxBytes is refused with its size and the limit, counted in UTF-8 bytes', () => {
  const over = refused(`token: ${MARK}${'A'.repeat(DEFAULT_MAX_KUBECONFIG_BYTES)}\n`, 'maxBytes');
  assert.equal(over.max, 262_144);
  assert.equal(over.actual, DEFAULT_MAX_KUBECONFIG_BYTES + 14);
  assert.match(over.message, /is 262158 bytes, more than the limit of 262144 \(maxBytes\)/);
  // 'é' is two bytes: 600 characters are 1,200 bytes.
  refused(`kind: ${'é'.repeat(600)}\n`, 'maxBytes', { maxBytes: 1000 });
  parseKubeconfig(`kind: ${'é'.repeat(490)}\n`, '/', { maxBytes: 1000 });
});

test('regression (issue 35): flow nesting deeper than maxDepth is refused, and a quote holding brackets neither hides nor closes a level', () => {
  const deep = refused('['.repeat(33) + ']'.repeat(33), 'maxDepth');
  assert.equal(deep.line, 1);
  assert.doesNotThrow(() => parseKubeconfig(`x: ${'['.repeat(31)}${']'.repeat(31)}\n`, '/', { maxDepth: 32 }));
  // The brackets are in a quoted scalar: no levels.
  assert.doesNotThrow(() => parseKubeconfig(`x: "${'['.repeat(1000)}"\n`, '/'));
  // "]]]]" is text, not four closings: the nesting after it still counts.
  refused(`a: ["]]]]", '}}}}', ${'['.repeat(32)}${']'.repeat(33)}\n`, 'maxDepth');
  refused(`a: # ]]]]\n  ${'{'.repeat(33)}`, 'maxDepth');
  refused(`a: {b: ${'{c: '.repeat(40)}`, 'maxDepth');
});

test('regression (issue 35): block nesting deeper than maxDepth is refused: indented mappings, compact sequences, sequences at their key column', () => {
  let mappings = '';
  for (let d = 0; d < 40; d++) mappings += `${' '.repeat(d)}k${d}:\n`;
  assert.equal(refused(mappings, 'maxDepth').line, 33);
  refused(`${'- '.repeat(40)}x\n`, 'maxDepth');
  // `key:\n- item` puts a sequence at its key's column: two levels for one column.
  let sameColumn = 'k:\n';
  for (let d = 0; d < 20; d++) sameColumn += `${' '.repeat(2 * d)}- k:\n`;
  refused(sameColumn, 'maxDepth');
  assert.doesNotThrow(() => parseKubeconfig(sameColumn.split('\n').slice(0, 15).join('\n'), '/'));
  // A block scalar's lines are text, however they are indented.
  const blockText = Array.from({ length: 50 }, (_, i) => `${' '.repeat(i + 2)}- [[x]]:`).join('\n');
  assert.doesNotThrow(() => parseKubeconfig(`x: |\n${blockText}\n`, '/'));
});

test('regression (issue 35): more nodes than maxNodes (keys, items, lines, comments) are refused, naming the line reached', () => {
  // Three nodes a line (key, value, line): the scan stops a third of the way in.
  const many = refused(keys(90), 'maxNodes', { maxNodes: 100 });
  assert.ok(many.line !== undefined && many.line < 40, `stopped early: line ${many.line}`);
  refused(`a: [${Array.from({ length: 200 }, (_, i) => i).join(', ')}]\n`, 'maxNodes', { maxNodes: 100 });
  refused(`# ${MARK}\n`.repeat(200), 'maxNodes', { maxNodes: 100 });
  refused('\n'.repeat(200), 'maxNodes', { maxNodes: 100 });
  // The default: 20,000 nodes; a line `kN: 1` is three (two scalars and a line), 180 KiB here.
  refused(keys(20_000, 'k'), 'maxNodes');
});

test('regression (issue 35): more aliases than maxAliases are refused (a billion-laughs document), and a few still work', () => {
  let laughs = `a0: &a0 [${MARK}, ${MARK}, ${MARK}, ${MARK}, ${MARK}, ${MARK}, ${MARK}, ${MARK}, ${MARK}]\n`;
  for (let i = 1; i < 10; i++)
    laughs += `a${i}: &a${i} [${Array(9)
      .fill(`*a${i - 1}`)
      .join(', ')}]\n`;
  refused(laughs, 'maxAliases');
  const shared = parseKubeconfig(
    [
      'exec: &aws {apiVersion: client.authentication.k8s.io/v1, command: aws}',
      'users:',
      '- {name: a, user: {exec: *aws}}',
      '- {name: b, user: {exec: *aws}}',
    ].join('\n'),
    '/',
  );
  assert.equal(shared.users?.[1]?.user.exec?.command, 'aws');
  refused('x: &x 1\ny: [*x, *x, *x]\n', 'maxAliases', { maxAliases: 2 });
});

test('a mapping that repeats a key is refused in one pass, naming its line and not the key', () => {
  assert.throws(
    () => parseKubeconfig(`kind: Config\n${MARK}: 1\nclusters: []\n${MARK}: 2\n`, '/'),
    (err: unknown) =>
      err instanceof KubeconfigError &&
      /repeats a key in one mapping \(line 4\)/.test(err.message) &&
      !err.message.includes(MARK),
  );
  assert.throws(() => parseKubeconfig('{a: 1, "a": 2}', '/'), /repeats a key/);
  assert.throws(() => parseKubeconfig('? [a]\n: 1\n', '/'), /mapping key that is not a plain value/);
  // 6,000 distinct keys in one mapping (all the node limit allows) are not one too many.
  assert.equal(Object.keys(parseKubeconfig(keys(6000, 'k'), '/')).length, 6000);
});

test('limits are options: Infinity turns one off, anything but a whole number is refused', () => {
  assert.doesNotThrow(() => parseKubeconfig(`x: ${'['.repeat(40)}${']'.repeat(40)}`, '/', { maxDepth: Infinity }));
  for (const bad of [-1, 1.5, Number.NaN]) {
    assert.throws(
      () => parseKubeconfig('kind: Config\n', '/', { maxNodes: bad }),
      (err: unknown) => err instanceof InvalidOptionError && err.option === 'maxNodes',
    );
  }
});

test('a kubeconfig file over a limit is refused naming the file, the limit and the line', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'kc-limits-'));
  const file = path.join(dir, 'config');
  await writeFile(file, `clusters:\n- ${'['.repeat(40)}\n`);
  await assert.rejects(
    loadKubeconfigFile(file),
    (err: unknown) =>
      err instanceof KubeconfigLimitError &&
      err.limit === 'maxDepth' &&
      err.line === 2 &&
      err.message.includes(`(in ${file})`),
  );
  await writeFile(file, stringify({ kind: 'Config', preferences: { a: 'x'.repeat(2000) } } satisfies Kubeconfig));
  await assert.rejects(loadKubeconfigFile(file, { maxBytes: 1024 }), /more than the limit of 1024 \(maxBytes\)/);
  assert.equal((await loadKubeconfigFile(file)).kind, 'Config');
});

test("the operator's own kubeconfig file gets the local limits: a personal kubeconfig of megabytes loads, where a member's is refused at 256 KiB", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'kc-local-'));
  const file = path.join(dir, 'config');
  const text = stringify(bigKubeconfig({ contexts: 600, clusters: 600, execUsers: false }));
  assert.ok(Buffer.byteLength(text) > 1024 * 1024, `${Buffer.byteLength(text)} bytes: over 1 MiB`);
  await writeFile(file, text);
  assert.equal((await loadKubeconfigFile(file)).contexts?.length, 600);
  assert.equal(parseKubeconfig(text, dir, LOCAL_KUBECONFIG_LIMITS).contexts?.length, 600);
  assert.equal(refused(text, 'maxBytes').max, DEFAULT_MAX_KUBECONFIG_BYTES);
  // Depth and aliases keep their defaults even for a local file.
  await writeFile(file, `clusters:\n- ${'['.repeat(40)}\n`);
  await assert.rejects(
    loadKubeconfigFile(file),
    (err: unknown) => err instanceof KubeconfigLimitError && err.limit === 'maxDepth',
  );
});
