import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyPatch } from 'rfc6902';
import { kind } from '../client/kind.js';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { reviewAdmission } from './admission.js';
import { allow, deny } from './handlers.js';
import type { AdmissionRequest } from './review-types.js';
import { Webhooks } from './webhooks.js';

interface Widget extends KubeObject {
  spec: { size: number; color?: string; tags?: string[] };
}
const WIDGET = kind<Widget>('example.com/v1', 'Widget');

function request(operation: AdmissionRequest['operation'], object: Widget | null, oldObject: Widget | null = null): AdmissionRequest {
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
const widget = (size: number, extra: Partial<Widget['spec']> = {}): Widget => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' }, spec: { size, ...extra } });

function only(webhooks: Webhooks) {
  return webhooks.admissionWebhooks()[0]!;
}
const deps = (clock = new FakeClock()) => ({ clock, timeoutMs: 1000, signal: new AbortController().signal });

describe('admission review', () => {
  test('a validator that denies answers allowed=false with its message, code 403 and its warnings', async () => {
    const w = new Webhooks();
    w.validate(WIDGET, (obj, old) => (old && obj.spec.size < old.spec.size ? deny('size cannot shrink', { warnings: ['size is sticky'] }) : allow('looks fine')));
    const denied = await reviewAdmission(only(w), request('UPDATE', widget(1), widget(3)), deps());
    assert.deepEqual(denied, { uid: 'uid-1', allowed: false, status: { code: 403, message: 'size cannot shrink' }, warnings: ['size is sticky'] });
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
    assert.match(res.status!.message!, /^webhook \/validate-example-com-v1-widget failed: lookup failed for https:\/\/user:/);
    assert.doesNotMatch(res.status!.message!, /hunter2/);
  });

  test('a handler past the timeout is denied with 504 naming the path, and its signal aborts', async () => {
    const clock = new FakeClock();
    const w = new Webhooks();
    let aborted = false;
    w.validate(WIDGET, (_obj, _old, req) => new Promise(() => req.signal.addEventListener('abort', () => (aborted = true))));
    const pending = reviewAdmission(only(w), request('CREATE', widget(1)), deps(clock));
    await clock.advance(999);
    let settled = false;
    void pending.then(() => (settled = true));
    await clock.advance(0);
    assert.equal(settled, false, 'still waiting before the timeout');
    await clock.advance(1);
    const res = await pending;
    assert.deepEqual(res, { uid: 'uid-1', allowed: false, status: { code: 504, message: 'webhook /validate-example-com-v1-widget did not answer within 1000 ms', reason: 'Timeout' } });
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
    assert.deepEqual(patched, { ...original, metadata: { ...original.metadata, labels: { 'example.com/size': '2' } }, spec: { size: 2, color: 'blue', tags: ['a', 'defaulted'] } });
    assert.deepEqual(original.spec, { size: 2, tags: ['a'] }, 'the request object itself is untouched');
  });

  test('a mutator that changes nothing answers without a patch', async () => {
    const w = new Webhooks();
    w.mutate(WIDGET, (obj) => obj);
    assert.deepEqual(await reviewAdmission(only(w), request('CREATE', widget(1)), deps()), { uid: 'uid-1', allowed: true });
  });

  test('a request for another kind or version is denied with 400, the handler not called', async () => {
    const w = new Webhooks();
    let called = false;
    w.validate(WIDGET, () => void (called = true));
    const res = await reviewAdmission(only(w), { ...request('CREATE', widget(1)), kind: { group: 'example.com', version: 'v2', kind: 'Widget' } }, deps());
    assert.equal(res.allowed, false);
    assert.equal(res.status?.code, 400);
    assert.match(res.status!.message!, /serves example.com\/v1\/Widget, not example.com\/v2\/Widget/);
    assert.equal(called, false);
  });
});
