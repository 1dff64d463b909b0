/**
 * Fuzz (issue 18, item 6): ApiError built from random Status bodies — as the watch decoder builds one
 * from an ERROR event's object, whatever it is — never throws, is always well-formed, and never
 * carries a credential planted in the server's text. Seeded (`FUZZ_SEED=<n>` replays a run),
 * bounded in time (`FUZZ_TIME_MS`). (`api-error.fuzz.test.ts` fuzzes the HTTP path end to end.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { ApiError } from './api-error.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const TIME_MS = Number(process.env.FUZZ_TIME_MS ?? 1500);
const MARK = 'S3CR3T';

const secret = fc.nat().map((n) => `${MARK}${n.toString(36)}z`);
/** Server text with a credential somewhere in it, in one of the shapes a reflecting proxy produces. */
const leakyText = fc
  .tuple(
    fc.string(),
    secret,
    fc.constantFrom(
      (s: string) => `Authorization: Bearer ${s}`,
      (s: string) => `Bearer ${s}`,
      (s: string) => `https://admin:${s}@10.0.0.1:6443/api`,
      (s: string) => `?access_token=${s}`,
      (s: string) => `token=${s}`,
      (s: string) => `{"password":"${s}"}`,
      (s: string) => `X-Api-Key: ${s}`,
      (s: string) => `eyJhbGciOi${s}.eyJzdWIiOi${s}.sig${s}`,
    ),
    fc.string(),
  )
  .map(([before, s, shape, after]) => `${before} ${shape(s)} ${after}`);

const bodyArb = fc.oneof(
  fc.anything(),
  fc.record(
    {
      kind: fc.oneof(fc.constant('Status'), fc.anything()),
      code: fc.oneof(fc.integer({ min: 100, max: 599 }), fc.anything()),
      reason: fc.oneof(fc.constantFrom('NotFound', 'Conflict', 'Expired', ''), fc.anything()),
      message: fc.oneof(leakyText, fc.anything()),
      details: fc.oneof(
        fc.record(
          {
            causes: fc.oneof(
              fc.array(fc.record({ message: fc.oneof(leakyText, fc.anything()), field: fc.string() })),
              fc.anything(),
            ),
            retryAfterSeconds: fc.anything(),
          },
          { requiredKeys: [] },
        ),
        fc.anything(),
      ),
    },
    { requiredKeys: [] },
  ),
);

test('ApiError.fromStatus on any body is well-formed and never carries a planted credential', () => {
  let runs = 0;
  try {
    fc.assert(
      fc.property(bodyArb, fc.integer({ min: 100, max: 599 }), (body, fallback) => {
        runs++;
        const err = ApiError.fromStatus(body as never, fallback, { method: 'GET', path: '/api' });
        assert.ok(Number.isInteger(err.status) && err.status >= 100 && err.status <= 599);
        assert.equal(typeof err.reason, 'string');
        assert.ok(err.retryAfterMs === undefined || (Number.isFinite(err.retryAfterMs) && err.retryAfterMs >= 0));
        const text = `${err.message}\n${inspect(err, { depth: 10 })}`;
        assert.ok(!text.includes(MARK), `no credential in the error: ${err.message}`);
      }),
      { seed: SEED, numRuns: 1_000_000, interruptAfterTimeLimit: TIME_MS },
    );
  } catch (e) {
    console.log(`# ApiError redaction fuzz failed with FUZZ_SEED=${SEED}`);
    throw e;
  }
  console.log(`# ApiError redaction: ${runs} runs in ${TIME_MS} ms, seed ${SEED}`);
  assert.ok(runs >= 20, `only ${runs} runs`);
});
