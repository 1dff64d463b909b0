import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { TokenReviewAuthorizer } from './token-review-authorizer.js';

/** An API server that knows two tokens: alice may get /metrics, bob may not. */
function reviewer() {
  const calls: string[] = [];
  let failing = false;
  const client = {
    create: async (obj: { kind: string; spec: Record<string, unknown> }) => {
      calls.push(obj.kind);
      if (failing) throw new Error('503 Service Unavailable');
      if (obj.kind === 'TokenReview') {
        const user = { 'alice-token': 'alice', 'bob-token': 'bob' }[obj.spec.token as string];
        return {
          status: user
            ? { authenticated: true, user: { username: user, groups: ['system:authenticated'] } }
            : { authenticated: false },
        };
      }
      const attrs = obj.spec.nonResourceAttributes as { path: string; verb: string };
      return { status: { allowed: obj.spec.user === 'alice' && attrs.path === '/metrics' && attrs.verb === 'get' } };
    },
  };
  return { calls, client: client as never, fail: (v: boolean) => (failing = v) };
}

test('no or malformed Authorization is 401 without asking the API server', async () => {
  const r = reviewer();
  const auth = new TokenReviewAuthorizer({ client: r.client, clock: new FakeClock(0) });
  assert.equal(await auth.authorize(undefined, '/metrics'), 401);
  assert.equal(await auth.authorize('Basic YWxpY2U6eA==', '/metrics'), 401);
  assert.equal(await auth.authorize('Bearer', '/metrics'), 401);
  assert.deepEqual(r.calls, []);
});

test('a token is authenticated by TokenReview and authorized by SubjectAccessReview for get on the path', async () => {
  const r = reviewer();
  const auth = new TokenReviewAuthorizer({ client: r.client, clock: new FakeClock(0) });
  assert.equal(await auth.authorize('Bearer alice-token', '/metrics'), 200);
  assert.equal(await auth.authorize('Bearer bob-token', '/metrics'), 403);
  assert.equal(await auth.authorize('Bearer forged', '/metrics'), 401);
  assert.deepEqual(r.calls, [
    'TokenReview',
    'SubjectAccessReview',
    'TokenReview',
    'SubjectAccessReview',
    'TokenReview',
  ]);
});

test('answers are cached for the TTL (by token hash), then asked again; concurrent scrapes share one review', async () => {
  const r = reviewer();
  const clock = new FakeClock(0);
  const auth = new TokenReviewAuthorizer({ client: r.client, clock, cacheTtlMs: 10_000 });
  assert.deepEqual(
    await Promise.all([1, 2, 3].map(() => auth.authorize('Bearer alice-token', '/metrics'))),
    [200, 200, 200],
  );
  assert.equal(await auth.authorize('Bearer bob-token', '/metrics'), 403);
  assert.equal(r.calls.length, 4);
  clock.step(9_999);
  assert.equal(await auth.authorize('Bearer alice-token', '/metrics'), 200);
  assert.equal(await auth.authorize('bearer bob-token', '/metrics'), 403);
  assert.equal(r.calls.length, 4, 'served from the cache');
  clock.step(1);
  assert.equal(await auth.authorize('Bearer alice-token', '/metrics'), 200);
  assert.equal(r.calls.length, 6, 'expired: reviewed again');
});

test('the cache is bounded: the oldest token is forgotten', async () => {
  const r = reviewer();
  const auth = new TokenReviewAuthorizer({ client: r.client, clock: new FakeClock(0), cacheSize: 2 });
  for (const t of ['a', 'b', 'c']) await auth.authorize(`Bearer ${t}`, '/metrics');
  const before = r.calls.length;
  await auth.authorize('Bearer c', '/metrics');
  assert.equal(r.calls.length, before);
  await auth.authorize('Bearer a', '/metrics');
  assert.equal(r.calls.length, before + 1);
});

test('a failing review is 500, not cached, and the token never reaches the log', async () => {
  const r = reviewer();
  const log = recordingLogger();
  const auth = new TokenReviewAuthorizer({ client: r.client, clock: new FakeClock(0), logger: log });
  r.fail(true);
  assert.equal(await auth.authorize('Bearer alice-token', '/metrics'), 500);
  r.fail(false);
  assert.equal(await auth.authorize('Bearer alice-token', '/metrics'), 200);
  assert.ok(log.entries.length > 0);
  assert.doesNotMatch(JSON.stringify(log.entries), /alice-token/);
});
