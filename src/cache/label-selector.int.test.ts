/**
 * The label-selector parser checked against the API server itself: for each selector, the server
 * refuses it (400) exactly when `parseLabelSelector` does, and otherwise lists exactly the
 * ConfigMaps `matchesLabels` selects. The corpus is the cases where the cache's and the fake's old
 * parsers disagreed, Kubernetes' edge cases, and seeded random token soup (replayable by seed).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { KubeClient } from '../client/kube-client.js';
import { ApiError } from '../client/api-error.js';
import { seededRandom } from '../core/seeded-random.js';
import { InvalidLabelSelectorError } from './errors.js';
import { matchesLabels, parseLabelSelector } from './label-selector.js';

const OBJECTS: Readonly<Record<string, Record<string, string>>> = {
  empty: { a: '' },
  ax: { a: 'x' },
  keywords: { a: 'b', in: 'notin', notin: 'in' },
  zeros: { n: '007', 'example.com/a': 'v' },
  int64max: { n: '9223372036854775807' },
  pastint64: { n: '9223372036854775808' },
  bare: {},
  prefixed: { 'example.com/a': 'x', 'a.b-c.d/e_f': 'X.y-z' },
};

const FIXED: readonly string[] = [
  '',
  'a',
  '!a',
  'a=',
  'a==x',
  'a!=x',
  'a in (x,)',
  'a in ()',
  'a notin ()',
  'a in (,)',
  'a\r=x',
  'a=x,\r\nn',
  'in=notin',
  'notin in (in)',
  'n>6',
  'n<8',
  'n>9223372036854775806',
  'n<9223372036854775807',
  'n>-1',
  'n<+9',
  'n>9223372036854775808',
  'n>1.5',
  'n>',
  'n<x',
  'a..b/c=1',
  'a.-b/c',
  'a-.b/c',
  'A.com/a',
  '/a',
  'a/',
  'a/b/c',
  'example.com/a',
  'a.b-c.d/e_f=X.y-z',
  `${'n'.repeat(63)}`,
  `${'n'.repeat(64)}`,
  `${['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.')}/n`,
  `${['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(62)].join('.')}/n`,
  `a=${'v'.repeat(63)}`,
  `a=${'v'.repeat(64)}`,
  'a=-x',
  'a=x-',
  'a=b=c',
  'a b',
  'a,',
  ',a',
  'a,,b',
  'a in x',
  'a in (x',
  'a in in (x)',
  '!a=b',
  'a!b',
  'a=!b',
  'a<=1',
  '!=a',
];

const TOKENS = [
  'a',
  'n',
  'in',
  'notin',
  'example.com/a',
  'a..b/c',
  'x',
  '',
  '007',
  '-1',
  '9223372036854775808',
  'X.y-z',
  '-x',
  '=',
  '==',
  '!=',
  '!',
  '(',
  ')',
  ',',
  '<',
  '>',
  ' ',
  '\r',
  '\t',
];

function randomSelectors(seed: number, count: number): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const n = 1 + Math.floor(random() * 7);
    return Array.from({ length: n }, () => TOKENS[Math.floor(random() * TOKENS.length)]!).join('');
  });
}

describe('label selectors: the parser agrees with the API server', () => {
  let env: TestEnv;
  let client: KubeClient;
  const ns = `ls-${randomUUID().slice(0, 8)}`;

  before(async () => {
    env = await TestEnv.start();
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (const [name, labels] of Object.entries(OBJECTS))
      await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels } });
  });
  after(async () => {
    await client?.close();
    await env?.stop();
  });

  /** The server's answer: the names it lists, or 'refused' for a 400. */
  async function server(selector: string): Promise<string[] | 'refused'> {
    try {
      const res = await client.transport.request<{ items: { metadata: { name: string } }[] }>({
        method: 'GET',
        path: `/api/v1/namespaces/${ns}/configmaps?labelSelector=${encodeURIComponent(selector)}`,
      });
      return res.body.items.map((i) => i.metadata.name).sort();
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) return 'refused';
      throw err;
    }
  }

  function ours(selector: string): string[] | 'refused' {
    try {
      const parsed = parseLabelSelector(selector);
      return Object.entries(OBJECTS)
        .filter(([, labels]) => matchesLabels(parsed, labels))
        .map(([name]) => name)
        .sort();
    } catch (err) {
      assert.ok(err instanceof InvalidLabelSelectorError, String(err));
      return 'refused';
    }
  }

  async function disagreements(selectors: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    for (const selector of selectors) {
      const [theirs, mine] = [await server(selector), ours(selector)];
      if (JSON.stringify(theirs) !== JSON.stringify(mine))
        out.push(`${JSON.stringify(selector)}: server ${JSON.stringify(theirs)}, parser ${JSON.stringify(mine)}`);
    }
    return out;
  }

  test('the fixed corpus (old disagreements and Kubernetes edge cases): same verdict and same objects as the server', async () => {
    const verdicts = await Promise.all(FIXED.map(async (s) => server(s)));
    assert.ok(
      verdicts.some((v) => v === 'refused') && verdicts.some((v) => v !== 'refused' && v.length > 0),
      'the corpus has refused and matching selectors',
    );
    assert.deepEqual(await disagreements(FIXED), []);
  });

  test('300 seeded random token-soup selectors: same verdict and same objects as the server', async () => {
    const seed = Number(process.env.SELECTOR_SEED ?? 13);
    const selectors = randomSelectors(seed, 300);
    assert.deepEqual(await disagreements(selectors), [], `seed ${seed}`);
  });
});
