import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { kind } from '../client/kind.js';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { checkProperty, fuzzTimeMs } from '../core/testing/fuzz.js';
import { convertObject, reviewConversion } from './conversion.js';
import { spoke } from './handlers.js';
import { Webhooks } from './webhooks.js';

/** Hub: v2 has `replicas` and a nested `image`; the v1 spoke had `size` and one `image` string. */
interface WidgetV2 extends KubeObject {
  spec: { replicas: number; image: { name: string; tag: string } };
}
interface WidgetV1 extends KubeObject {
  spec: { size: number; image: string };
}
const V2 = kind<WidgetV2>('example.com/v2', 'Widget');
const V1 = kind<WidgetV1>('example.com/v1', 'Widget');

function webhooks(): Webhooks {
  const w = new Webhooks();
  w.convert(V2, {
    hub: V2,
    spokes: [
      spoke(V1, {
        toHub: (o) => {
          const colon = o.spec.image.lastIndexOf(':');
          return {
            ...o,
            spec: {
              replicas: o.spec.size,
              image: { name: o.spec.image.slice(0, colon), tag: o.spec.image.slice(colon + 1) },
            },
          };
        },
        fromHub: (h) => ({ ...h, spec: { size: h.spec.replicas, image: `${h.spec.image.name}:${h.spec.image.tag}` } }),
      }),
    ],
  });
  return w;
}

const meta = fc.record(
  {
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
    namespace: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
    uid: fc.uuid(),
    resourceVersion: fc.nat().map(String),
    generation: fc.nat(),
    labels: fc.option(fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.string(), { noNullPrototype: true }), {
      nil: undefined,
    }),
    annotations: fc.option(fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.string(), { noNullPrototype: true }), {
      nil: undefined,
    }),
  },
  { requiredKeys: ['name', 'namespace', 'uid', 'resourceVersion', 'generation'] },
);
const hub = fc.record({
  apiVersion: fc.constant('example.com/v2'),
  kind: fc.constant('Widget'),
  metadata: meta,
  spec: fc.record({
    replicas: fc.nat(),
    image: fc.record({
      name: fc.stringMatching(/^[a-z0-9./:-]{1,30}$/),
      tag: fc.stringMatching(/^[a-zA-Z0-9._-]{1,20}$/),
    }),
  }),
});
/** Drops keys whose value is undefined (JSON never carries them). */
const json = <T>(o: T): T => JSON.parse(JSON.stringify(o)) as T;

describe('conversion through the hub', () => {
  test('converts spoke → hub and hub → spoke, setting apiVersion and keeping metadata', () => {
    const w = webhooks();
    const v1: WidgetV1 = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'a', uid: 'u', annotations: { note: 'x' } },
      spec: { size: 3, image: 'registry:5000/app:1.2' },
    };
    const v2 = convertObject(w, v1, 'example.com/v2');
    assert.deepEqual(v2, {
      apiVersion: 'example.com/v2',
      kind: 'Widget',
      metadata: { name: 'a', uid: 'u', annotations: { note: 'x' } },
      spec: { replicas: 3, image: { name: 'registry:5000/app', tag: '1.2' } },
    });
    assert.deepEqual(convertObject(w, v2, 'example.com/v1'), v1);
    assert.equal(convertObject(w, v1, 'example.com/v1'), v1, 'same version: unchanged');
  });

  test('round trip hub → spoke → hub is the identity (property, through the ConversionReview)', async () => {
    const w = webhooks();
    const clock = new FakeClock();
    const review = async (objects: KubeObject[], desiredAPIVersion: string): Promise<KubeObject[]> => {
      const res = await reviewConversion(
        w,
        { uid: 'u', desiredAPIVersion, objects },
        { clock, timeoutMs: 1000, signal: new AbortController().signal, path: '/convert' },
      );
      assert.deepEqual(res.result, { status: 'Success' });
      return [...res.convertedObjects];
    };
    await checkProperty(
      'hub → v1 → hub',
      fc.asyncProperty(fc.array(hub, { maxLength: 4 }), async (objects) => {
        const input = json(objects);
        const there = await review(input, 'example.com/v1');
        assert.ok(there.every((o) => o.apiVersion === 'example.com/v1'));
        assert.deepEqual(
          there.map((o) => o.metadata),
          input.map((o) => o.metadata),
          'metadata is never changed',
        );
        assert.deepEqual(json(await review(there, 'example.com/v2')), input);
      }),
      { timeMs: fuzzTimeMs(500), file: import.meta.filename },
    );
  });

  test('an unknown version, another kind or a throwing converter fails the review with a message', async () => {
    const w = webhooks();
    const deps = { clock: new FakeClock(), timeoutMs: 1000, signal: new AbortController().signal, path: '/convert' };
    const v1 = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'a' },
      spec: { size: 1, image: 'a:b' },
    };
    assert.deepEqual(
      await reviewConversion(w, { uid: 'u', desiredAPIVersion: 'example.com/v3', objects: [v1] }, deps),
      {
        uid: 'u',
        convertedObjects: [],
        result: { status: 'Failure', message: 'the conversion of Widget.example.com knows versions v2, v1, not v3' },
      },
    );
    const other = await reviewConversion(
      w,
      { uid: 'u', desiredAPIVersion: 'example.com/v2', objects: [{ ...v1, kind: 'Gadget' }] },
      deps,
    );
    assert.deepEqual(other.result, {
      status: 'Failure',
      message: 'no conversion is registered for Gadget.example.com',
    });
    const broken = await reviewConversion(
      w,
      {
        uid: 'u',
        desiredAPIVersion: 'example.com/v2',
        objects: [JSON.parse(JSON.stringify({ ...v1, spec: null })) as KubeObject],
      },
      deps,
    );
    assert.equal(broken.result.status, 'Failure');
    assert.match((broken.result as { message: string }).message, /^conversion failed: /);
  });
});
