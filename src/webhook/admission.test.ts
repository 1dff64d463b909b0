import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyPatch } from 'rfc6902';
import { kind } from '../client/kind.js';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { admissionTimeoutMs, reviewAdmission } from './admission.js';
import { parse as parseLossless } from 'lossless-json';
import { cloneJson } from './json-values.js';
import { allow, deny } from './handlers.js';
import type { AdmissionRequest } from './review-types.js';
import { Webhooks } from './webhooks.js';

interface Widget extends KubeObject {
  spec: { size: number; color?: string; tags?: string[] };
}
const WIDGET = kind<Widget>('example.com/v1', 'Widget');

function request(
  operation: AdmissionRequest['operation'],
  object: Widget | null,
  oldObject: Widget | null = null,
): AdmissionRequest {
  return {
    uid: 'uid-1',
    kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
    resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
    operation,
    userInfo: { username: 'alice' },
    object,
    oldObject,
  };
}
const widget = (size: number, extra: Partial<Widget['spec']> = {}): Widget => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'ns' },
  spec: { size, ...extra },
});

function only(webhooks: Webhooks) {
  return webhooks.admissionWebhooks()[0]!;
}
const deps = (clock = new FakeClock()) => ({ clock, timeoutMs: 1000, signal: new AbortController().signal });

describe('admission review', () => {
  test('a validator that denies answers allowed=false with its message, code 403 and its warnings', async () => {
    const w = new Webhooks();
    w.validate(WIDGET, (obj, old) =>
      old && obj.spec.size < old.spec.size
        ? deny('size cannot shrink', { warnings: ['size is sticky'] })
        : allow('looks fine'),
    );
    const denied = await reviewAdmission(only(w), request('UPDATE', widget(1), widget(3)), deps());
    assert.deepEqual(denied, {
      uid: 'uid-1',
      allowed: false,
      status: { code: 403, message: 'size cannot shrink' },
      warnings: ['size is sticky'],
    });
    const allowed = await reviewAdmission(only(w), request('CREATE', widget(1)), deps());
    assert.deepEqual(allowed, { uid: 'uid-1', allowed: true, warnings: ['looks fine'] });
  });

  test('a validator returning nothing allows; on DELETE it gets the deleted object as obj and oldObj', async () => {
    const w = new Webhooks();
    const seen: [number, number | undefined][] = [];
    w.validate(WIDGET, (obj, old) => void seen.push([obj.spec.size, old?.spec.size]), { operations: ['DELETE'] });
    const res = await reviewAdmission(only(w), request('DELETE', null, widget(5)), deps());
    assert.deepEqual(res, { uid: 'uid-1', allowed: true });
    assert.deepEqual(seen, [[5, 5]]);
  });

  test('a handler that throws denies with code 500 and the error message, credentials redacted', async () => {
    const w = new Webhooks();
    w.validate(WIDGET, () => {
      throw new Error('lookup failed for https://user:hunter2@db.internal/');
    });
    const res = await reviewAdmission(only(w), request('CREATE', widget(1)), deps());
    assert.equal(res.allowed, false);
    assert.equal(res.status?.code, 500);
    assert.match(
      res.status!.message!,
      /^webhook \/validate-example-com-v1-widget failed: lookup failed for https:\/\/user:/,
    );
    assert.doesNotMatch(res.status!.message!, /hunter2/);
  });

  test('a handler past the timeout is denied with 504 naming the path, and its signal aborts', async () => {
    const clock = new FakeClock();
    const w = new Webhooks();
    let aborted = false;
    w.validate(
      WIDGET,
      (_obj, _old, req) => new Promise(() => req.signal.addEventListener('abort', () => (aborted = true))),
    );
    const pending = reviewAdmission(only(w), request('CREATE', widget(1)), deps(clock));
    await clock.advance(999);
    let settled = false;
    void pending.then(() => (settled = true));
    await clock.advance(0);
    assert.equal(settled, false, 'still waiting before the timeout');
    await clock.advance(1);
    const res = await pending;
    assert.deepEqual(res, {
      uid: 'uid-1',
      allowed: false,
      status: {
        code: 504,
        message: 'webhook /validate-example-com-v1-widget did not answer within 1000 ms',
        reason: 'Timeout',
      },
    });
    assert.equal(aborted, true);
  });

  test('a mutator returns the object to store; the JSONPatch turns the request object into exactly it', async () => {
    const w = new Webhooks();
    w.mutate(WIDGET, (obj) => {
      obj.spec.color ??= 'blue';
      obj.spec.tags = [...(obj.spec.tags ?? []), 'defaulted'];
      obj.metadata!.labels = { 'example.com/size': String(obj.spec.size) };
      return obj;
    });
    const original = widget(2, { tags: ['a'] });
    const res = await reviewAdmission(only(w), request('CREATE', original), deps());
    assert.equal(res.allowed, true);
    assert.equal(res.patchType, 'JSONPatch');
    const patched = structuredClone(original);
    const errors = applyPatch(patched, JSON.parse(Buffer.from(res.patch!, 'base64').toString('utf8')));
    assert.ok(errors.every((e) => e === null));
    assert.deepEqual(patched, {
      ...original,
      metadata: { ...original.metadata, labels: { 'example.com/size': '2' } },
      spec: { size: 2, color: 'blue', tags: ['a', 'defaulted'] },
    });
    assert.deepEqual(original.spec, { size: 2, tags: ['a'] }, 'the request object itself is untouched');
  });

  test('a mutator that changes nothing answers without a patch', async () => {
    const w = new Webhooks();
    w.mutate(WIDGET, (obj) => obj);
    assert.deepEqual(await reviewAdmission(only(w), request('CREATE', widget(1)), deps()), {
      uid: 'uid-1',
      allowed: true,
    });
  });

  test('a request for another kind or version is denied with 400, the handler not called', async () => {
    const w = new Webhooks();
    let called = false;
    w.validate(WIDGET, () => void (called = true));
    const res = await reviewAdmission(
      only(w),
      { ...request('CREATE', widget(1)), kind: { group: 'example.com', version: 'v2', kind: 'Widget' } },
      deps(),
    );
    assert.equal(res.allowed, false);
    assert.equal(res.status?.code, 400);
    assert.match(res.status!.message!, /serves example.com\/v1\/Widget, not example.com\/v2\/Widget/);
    assert.equal(called, false);
  });
});

describe('admission review: time and size (issue 24)', () => {
  interface Listy extends KubeObject {
    spec: { items: Array<{ name: string; port?: number }> };
  }
  const LISTY = kind<Listy>('example.com/v1', 'Widget');
  const listy = (n: number): Listy => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'l' },
    spec: { items: Array.from({ length: n }, (_, i) => ({ name: `item-${i}` })) },
  });
  const patchOf = (res: { patch?: string }) =>
    JSON.parse(Buffer.from(res.patch!, 'base64').toString('utf8')) as Parameters<typeof applyPatch>[1];

  for (const items of [400, 600]) {
    test(`a mutator defaulting one field in each of ${items} items is answered quickly with a patch that gives exactly its object`, async () => {
      const w = new Webhooks();
      w.mutate(LISTY, (obj) => {
        for (const item of obj.spec.items) item.port ??= 80;
        return obj;
      });
      const original = listy(items);
      const started = performance.now();
      const res = await reviewAdmission(
        only(w),
        { ...request('CREATE', null), object: original },
        { clock: new FakeClock(), timeoutMs: 2_000, signal: new AbortController().signal },
      );
      const elapsedMs = performance.now() - started;
      assert.ok(elapsedMs < 500, `answered in ${elapsedMs.toFixed(0)} ms`);
      const patched = cloneJson(original);
      assert.ok(applyPatch(patched, patchOf(res)).every((e) => e === null));
      assert.deepEqual(
        patched.spec.items,
        original.spec.items.map((i) => ({ ...i, port: 80 })),
      );
    });
  }

  test('an unchanged list of 5,000 items is allowed without a patch (no stack overflow, no 500)', async () => {
    const w = new Webhooks();
    w.mutate(LISTY, (obj) => obj);
    const res = await reviewAdmission(only(w), { ...request('CREATE', null), object: listy(5_000) }, deps());
    assert.deepEqual(res, { uid: 'uid-1', allowed: true });
  });

  test('the timeout covers the diff: a diff still running at the deadline is denied 504 under Fail', async () => {
    // Time moves only when read: each reading is 100 ms later, so a long diff runs out of time.
    class TickingClock extends FakeClock {
      private reads = 0;
      override monotonicNow(): number {
        return super.monotonicNow() + 100 * this.reads++;
      }
    }
    const w = new Webhooks();
    w.mutate(WIDGET, (obj) => {
      const spec = obj.spec as unknown as Record<string, number>;
      for (const key of Object.keys(spec)) spec[key]! += 1;
      return obj;
    });
    const spec = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    const res = await reviewAdmission(
      only(w),
      request('CREATE', { ...widget(1), spec } as unknown as Widget),
      deps(new TickingClock()),
    );
    assert.equal(res.allowed, false);
    assert.equal(res.status?.code, 504);
    assert.equal(res.patch, undefined);
  });

  test('the time a review spent before the handler (reading, decoding) counts against its timeout', async () => {
    const clock = new FakeClock();
    const w = new Webhooks();
    let called = false;
    w.validate(WIDGET, () => void (called = true));
    const startedAtMs = clock.monotonicNow();
    clock.step(1_000);
    const res = await reviewAdmission(only(w), request('CREATE', widget(1)), { ...deps(clock), startedAtMs });
    assert.equal(res.status?.code, 504);
    assert.equal(called, false);
  });

  test('under failurePolicy Ignore a handler past its timeout is answered allowed, with a warning, not a denial', async () => {
    const clock = new FakeClock();
    const w = new Webhooks();
    w.validate(WIDGET, () => new Promise(() => undefined), { failurePolicy: 'Ignore', timeoutSeconds: 30 });
    const reg = only(w);
    const pending = reviewAdmission(reg, request('CREATE', widget(1)), {
      clock,
      timeoutMs: admissionTimeoutMs(reg),
      signal: new AbortController().signal,
    });
    await clock.advance(28_999);
    let settled = false;
    void pending.then(() => (settled = true));
    await clock.advance(0);
    assert.equal(settled, false, 'still waiting at 29 s less 1 ms');
    await clock.advance(1);
    const res = await pending;
    assert.equal(res.allowed, true);
    assert.match(
      res.warnings![0]!,
      /did not answer within 29000 ms; allowed unchecked because its failurePolicy is Ignore/,
    );
  });

  test('a validator with timeoutSeconds 30 that takes 10 s is answered with its own verdict, not a 504 at 9 s', async () => {
    const clock = new FakeClock();
    const w = new Webhooks();
    w.validate(
      WIDGET,
      async (_obj, _old, req) => {
        await new Promise<void>((resolve) => clock.setTimer(10_000, resolve));
        return req.signal.aborted ? allow('aborted') : deny('checked: no');
      },
      { failurePolicy: 'Ignore', timeoutSeconds: 30 },
    );
    const reg = only(w);
    const pending = reviewAdmission(reg, request('CREATE', widget(1)), {
      clock,
      timeoutMs: admissionTimeoutMs(reg),
      signal: new AbortController().signal,
    });
    await clock.advance(10_000);
    assert.deepEqual(await pending, { uid: 'uid-1', allowed: false, status: { code: 403, message: 'checked: no' } });
  });

  test('per-webhook timeouts: timeoutSeconds less a margin of 1 s (a fifth under 5 s), capped by the server option', () => {
    const w = new Webhooks();
    w.validate(WIDGET, () => undefined, { path: '/a', timeoutSeconds: 30 });
    w.validate(WIDGET, () => undefined, { path: '/b' });
    w.validate(WIDGET, () => undefined, { path: '/c', timeoutSeconds: 2 });
    const [a, b, c] = w.admissionWebhooks();
    assert.deepEqual(
      [admissionTimeoutMs(a!), admissionTimeoutMs(b!), admissionTimeoutMs(c!), admissionTimeoutMs(a!, 2_000)],
      [29_000, 9_000, 1_600, 2_000],
    );
  });

  test('a big integer a mutator leaves alone is not in the patch; one it writes is patched byte for byte', async () => {
    const w = new Webhooks();
    w.mutate(WIDGET, (obj) => {
      (obj.spec as Record<string, unknown>).limit = 9223372036854775807n;
      return obj;
    });
    const object = parseLossless(
      '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1733079000123456789}}',
    ) as Widget;
    const res = await reviewAdmission(only(w), request('CREATE', object), { ...deps(), lossless: true });
    assert.equal(
      Buffer.from(res.patch!, 'base64').toString('utf8'),
      '[{"op":"add","path":"/spec/limit","value":9223372036854775807}]',
    );
  });
});
