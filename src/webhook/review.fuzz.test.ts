/**
 * Fuzz (issue 24): AdmissionReview and ConversionReview bodies sent to the real webhook server over
 * HTTPS — random, truncated, deeply nested, with huge numbers. Each must get a 4xx or a well-formed
 * review (never a 500, a dropped connection or a crash), numbers must come back as sent, and the
 * process's memory must stay bounded. Seeded (`FUZZ_SEED=<n>` replays) and bounded in time
 * (`FUZZ_TIME_MS`, per property).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:https';
import fc from 'fast-check';
import { isSafeNumber, parse as parseLossless, stringify as stringifyLossless, LosslessNumber } from 'lossless-json';
import { kind } from '../client/kind.js';
import { realClock } from '../core/clock.js';
import type { KubeObject } from '../core/object-key.js';
import { checkProperty, fuzzTimeMs } from '../core/testing/fuzz.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { spoke } from './handlers.js';
import { WebhookServer } from './webhook-server.js';
import { Webhooks } from './webhooks.js';

const TIME_MS = fuzzTimeMs(1500);
const check = (name: string, property: fc.IRawProperty<unknown[]>): Promise<void> =>
  checkProperty(name, property, { timeMs: TIME_MS, runTimeoutMs: 10_000, file: import.meta.filename });

const WIDGET = kind<KubeObject & { spec?: Record<string, unknown> }>('example.com/v1', 'Widget');
const WIDGET_V2 = kind<KubeObject & { spec?: Record<string, unknown> }>('example.com/v2', 'Widget');

interface Res {
  readonly status: number;
  readonly body: string;
}

/** A JSON number's text: safe, beyond 2^53, with many decimals or an exponent. */
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.tuple(fc.integer({ min: 0, max: 9 }), fc.stringMatching(/^[0-9]{1,30}$/)).map(([a, b]) => `${a}.${b}`),
  fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: -400, max: 400 })).map(([a, e]) => `${a}e${e}`),
);
const leaf = fc.oneof(
  numberText.map((t) => new LosslessNumber(t)),
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 5 }), tie('v'), { maxKeys: 4, noNullPrototype: true }),
  ),
})).v;

const object = (apiVersion: string, spec: unknown) => ({
  apiVersion,
  kind: 'Widget',
  metadata: { name: 'w', generation: new LosslessNumber('9223372036854775807') },
  spec,
});
const admission = (uid: string, spec: unknown) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid,
    kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
    resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
    operation: 'CREATE',
    userInfo: { username: 'fuzz' },
    object: object('example.com/v1', spec),
  },
});
const conversion = (uid: string, spec: unknown, to: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: { uid, desiredAPIVersion: to, objects: [object('example.com/v1', spec)] },
});

/** Nesting `[[[…]]]` or `{"a":{"a":…}}` this deep around a leaf. */
const nested = fc
  .tuple(fc.integer({ min: 1, max: 3_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

describe('review bodies over HTTPS (fuzz)', () => {
  let server: WebhookServer;
  let agent: Agent;
  let ca: string;
  let rssBefore: number;

  const post = (path: string, body: string): Promise<Res> =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.port!,
          path,
          method: 'POST',
          ca,
          agent,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (d: string) => (text += d))
            .on('end', () => resolve({ status: res.statusCode!, body: text }));
        },
      );
      req.on('error', reject).end(body);
    });

  /** A 4xx, or a 200 carrying a review of the kind asked about, for `uid` when the request had one. */
  function wellFormed(res: Res, path: string, uid: string | undefined): Record<string, unknown> | undefined {
    assert.ok(
      res.status === 200 || (res.status >= 400 && res.status < 500),
      `status ${res.status}: ${res.body.slice(0, 200)}`,
    );
    if (res.status !== 200) return undefined;
    const review = parseLossless(res.body) as { apiVersion: string; kind: string; response: Record<string, unknown> };
    assert.equal(review.kind, path === '/convert' ? 'ConversionReview' : 'AdmissionReview');
    if (uid !== undefined) assert.equal(review.response.uid, uid);
    if (path === '/convert')
      assert.ok(['Success', 'Failure'].includes((review.response.result as { status: string }).status));
    else {
      assert.equal(typeof review.response.allowed, 'boolean');
      if (review.response.patch)
        assert.ok(Array.isArray(JSON.parse(Buffer.from(review.response.patch as string, 'base64').toString('utf8'))));
    }
    return review.response;
  }

  before(async () => {
    const webhooks = new Webhooks();
    webhooks.validate(
      WIDGET,
      (obj) => (obj.spec && 'deny' in obj.spec ? { allowed: false, message: 'no' } : undefined),
      { path: '/validate' },
    );
    webhooks.mutate(WIDGET, (obj) => ({ ...obj, metadata: { ...obj.metadata, labels: { fuzzed: 'yes' } } }), {
      path: '/mutate',
    });
    webhooks.convert(WIDGET, {
      hub: WIDGET,
      spokes: [
        spoke(WIDGET_V2, {
          toHub: (o) => ({ ...o, apiVersion: 'example.com/v1' }),
          fromHub: (h) => ({ ...h, apiVersion: 'example.com/v2' }),
        }),
      ],
    });
    server = new WebhookServer(
      webhooks,
      { port: 0, host: '127.0.0.1', selfSignedHosts: ['127.0.0.1'] },
      { registry: createMetricsRegistry(), logger: recordingLogger(), clock: realClock, defaultHost: '127.0.0.1' },
    );
    await server.listen();
    ca = server.certificatePem!;
    agent = new Agent({ keepAlive: true, maxSockets: 4 });
    rssBefore = process.memoryUsage().rss;
  });
  after(async () => {
    agent.destroy();
    await server.close();
  });

  test('well-formed reviews with random objects and huge numbers: a well-formed answer, every number as sent', () =>
    check(
      'random reviews',
      fc.asyncProperty(
        value,
        fc.constantFrom('/validate', '/mutate', '/convert'),
        fc.uuid(),
        async (spec, path, uid) => {
          const body = stringifyLossless(
            path === '/convert' ? conversion(uid, spec, 'example.com/v2') : admission(uid, spec),
          )!;
          const response = wellFormed(await post(path, body), path, uid);
          assert.ok(response, 'a valid review is answered 200');
          if (path === '/convert') {
            const [converted] = response.convertedObjects as Array<{ spec: unknown; metadata: unknown }>;
            // A number JSON.parse holds exactly may come back in its shortest form (1e0 as 1); any other byte for byte.
            const expected = stringifyLossless(
              parseLossless(stringifyLossless(spec)!, null, (n) =>
                isSafeNumber(n) ? Number(n) : new LosslessNumber(n),
              ),
            );
            assert.equal(stringifyLossless(converted!.spec), expected, 'the spec comes back as sent');
            assert.equal(
              stringifyLossless((converted!.metadata as { generation: unknown }).generation),
              '9223372036854775807',
            );
          }
        },
      ),
    ));

  test('truncated, nested, mangled and random bodies: a 4xx or a well-formed answer, and memory stays bounded', async () => {
    const mangled = fc.oneof(
      // A valid review cut anywhere.
      fc.tuple(value, fc.constantFrom('/validate', '/mutate', '/convert'), fc.nat()).map(([spec, path, cut]) => {
        const text = stringifyLossless(
          path === '/convert' ? conversion('t', spec, 'example.com/v2') : admission('t', spec),
        )!;
        return { path, body: text.slice(0, cut % (text.length + 1)), uid: undefined };
      }),
      // Deeply nested specs (refused past the depth limit, answered under it).
      fc.tuple(nested, fc.constantFrom('/validate', '/mutate', '/convert')).map(([spec, path]) => {
        const text = stringifyLossless(path === '/convert' ? conversion('n', 0, 'example.com/v2') : admission('n', 0))!;
        return { path, body: text.replace('"spec":0', `"spec":${spec}`), uid: 'n' };
      }),
      // A number with hundreds of digits or a huge exponent.
      fc
        .tuple(
          fc.stringMatching(/^-?[1-9][0-9]{0,400}(\.[0-9]{1,50})?([eE][+-]?[0-9]{1,5})?$/),
          fc.constantFrom('/validate', '/mutate', '/convert'),
        )
        .map(([n, path]) => {
          const text = stringifyLossless(
            path === '/convert' ? conversion('h', 0, 'example.com/v2') : admission('h', 0),
          )!;
          return { path, body: text.replace('"spec":0', `"spec":{"n":${n}}`), uid: 'h' };
        }),
      // Reviews of the wrong shape, and random text.
      fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom('/validate', '/mutate', '/convert')).map(([v, path]) => ({
        path,
        body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: v }),
        uid: undefined,
      })),
      fc
        .tuple(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('/validate', '/mutate', '/convert'))
        .map(([body, path]) => ({ path, body, uid: undefined })),
    );
    await check(
      'mangled reviews',
      fc.asyncProperty(mangled, async ({ path, body, uid }) => {
        wellFormed(await post(path, body), path, uid);
      }),
    );
    const grownMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    assert.ok(grownMiB < 200, `RSS grew ${grownMiB.toFixed(0)} MiB`);
  });
});
