/**
 * Fuzz (issue 18): error answers with random bodies. Whatever a server or proxy sends with a 4xx/5xx
 * status (text, any JSON, a Status with fields of the wrong type, invalid UTF-8), the client throws
 * an `ApiError` carrying that status with a string message and reason, never a TypeError.
 * Seeded (`FUZZ_SEED=<n>` replays a run) and bounded in time (`FUZZ_TIME_MS`, per property).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkProperty, fuzzTimeMs } from '../core/testing/fuzz.js';
import { ApiError, apiErrorStatus, isConflict, isGone, isNotFound, type StatusBody } from './api-error.js';
import { StaticTokenCredential } from './credentials.js';
import { FakeApiServer } from './testing/fake-api-server.js';
import { makeTlsConfig } from './tls-config.js';
import { Transport } from './transport.js';

const TIME_MS = fuzzTimeMs(2000);
/** One request answered by a local server in more than this is a hang. */
const RUN_TIMEOUT_MS = 5000;

const check = (name: string, property: fc.IRawProperty<unknown[]>): Promise<void> =>
  checkProperty(name, property, { timeMs: TIME_MS, runTimeoutMs: RUN_TIMEOUT_MS, file: import.meta.filename });

/** A Status whose every field may be of any type (objects with a `toString` key included). */
const hostileValue = fc.oneof(
  fc.anything(),
  fc.constant({ toString: 1 }),
  fc.constant({ valueOf: null, toString: null }),
  fc.string({ unit: 'binary' }),
);
const statusish = fc.record(
  {
    kind: fc.oneof(fc.constant('Status'), hostileValue),
    code: fc.oneof(fc.integer({ min: -10, max: 1200 }), hostileValue),
    reason: hostileValue,
    message: hostileValue,
    details: fc.oneof(
      hostileValue,
      fc.record(
        { causes: fc.oneof(hostileValue, fc.array(hostileValue)), retryAfterSeconds: hostileValue, name: hostileValue },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

function wellFormed(e: unknown, status: number): boolean {
  return (
    e instanceof ApiError &&
    e.status === status &&
    typeof e.message === 'string' &&
    typeof e.reason === 'string' &&
    (e.retryAfterMs === undefined || Number.isFinite(e.retryAfterMs)) &&
    apiErrorStatus(e) === status &&
    typeof isGone(e) === 'boolean' &&
    typeof isConflict(e) === 'boolean' &&
    typeof isNotFound(e) === 'boolean'
  );
}

test('a Status of any shape becomes a well-formed ApiError', async () => {
  await check(
    'Status shapes',
    fc.property(fc.oneof(statusish, fc.jsonValue()), fc.integer({ min: 400, max: 599 }), (body, status) => {
      // As the transport uses it: the HTTP status wins over the body's code.
      const isStatus =
        typeof body === 'object' &&
        body !== null &&
        !Array.isArray(body) &&
        (body as { kind?: unknown }).kind === 'Status';
      const err = isStatus
        ? ApiError.fromStatus({ ...(body as StatusBody), code: status }, status)
        : new ApiError({ status });
      assert.ok(wellFormed(err, status), String(err));
      // As a watch ERROR event delivers it: the body's own code, when well-typed, wins.
      const fromEvent = ApiError.fromStatus(body as StatusBody, 500);
      assert.ok(
        fromEvent instanceof ApiError && typeof fromEvent.status === 'number' && Number.isInteger(fromEvent.status),
      );
    }),
  );
});

let server: FakeApiServer;
before(async () => {
  server = await FakeApiServer.start();
});
after(async () => {
  await server.close();
});

test('any error answer over HTTP throws an ApiError with the status that was sent', async () => {
  const t = new Transport(
    {
      server: server.url,
      tls: makeTlsConfig({ rejectUnauthorized: true }),
      credential: new StaticTokenCredential('t'),
      namespace: 'd',
    },
    { backoff: { maxAttempts: 1 } },
  );
  const body = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 400 }).map((s) => Buffer.from(s)),
    fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)),
    fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? '')),
    statusish.map((v) => Buffer.from(JSON.stringify(v) ?? '')),
  );
  try {
    await check(
      'HTTP error answers',
      fc.asyncProperty(
        fc.integer({ min: 400, max: 599 }),
        body,
        fc.constantFrom('application/json', 'text/html', 'text/plain; charset=latin1'),
        async (status, bytes, type) => {
          server.handle((_req, res) => {
            res.writeHead(status, { 'content-type': type });
            res.end(bytes);
          });
          const err = await t.request({ method: 'GET', path: '/api/v1/namespaces/d/configmaps/x' }).then(
            () => undefined,
            (e: unknown) => e,
          );
          assert.ok(wellFormed(err, status), `${String(err)}`);
        },
      ),
    );
  } finally {
    await t.close();
  }
});
