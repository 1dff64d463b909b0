import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { validateAgainstSchema } from 'operator-runtime/crd';
import { convertObject, Webhooks } from 'operator-runtime/webhook';
// The project's seeded, time-bounded property runner (test support, not part of the package).
import { checkProperty, fuzzTimeMs } from '../../../src/core/testing/fuzz.js';
import { DATABASE, type Database } from './database.js';
import {
  DATABASE_V1ALPHA1,
  defaultDatabase,
  fromV1,
  registerDatabaseWebhooks,
  toV1,
  validateDatabase,
  type DatabaseV1alpha1,
} from './webhooks.js';

const policy = {
  defaultEndpoint: 'http://backups.operator.svc:8090',
  allowedEndpoints: ['https://backups.example.com'],
};

function db(spec: Partial<Database['spec']> = {}, status?: Database['status']): Database {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Database',
    metadata: { name: 'orders', namespace: 'shop', uid: 'u1', resourceVersion: '7', generation: 2 },
    spec: { engine: 'postgres', version: '16', replicas: 3, storage: '10Gi', ...spec },
    ...(status ? { status } : {}),
  };
}
const backingUp = {
  readyReplicas: 3,
  conditions: [
    {
      type: 'BackedUp',
      status: 'False' as const,
      reason: 'BackupRunning',
      message: 'backup b-1 running',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    },
  ],
};

describe('Database validation (rules the schema cannot express)', () => {
  test('replicas cannot drop below the Ready replicas while a backup runs; unchanged or not lower than Ready passes', () => {
    const old = db({ replicas: 3 }, backingUp);
    assert.deepEqual(validateDatabase(db({ replicas: 1 }), old, policy), {
      allowed: false,
      message:
        'spec.replicas cannot drop below the 3 Ready replicas while a backup is running (asked: 1); retry once it completed',
    });
    assert.equal(
      validateDatabase(db({ replicas: 3 }), old, policy).allowed,
      true,
      "the operator's own updates (finalizer) keep the count",
    );
    assert.equal(validateDatabase(db({ replicas: 5 }), old, policy).allowed, true);
    assert.equal(
      validateDatabase(db({ replicas: 1 }), db({ replicas: 3 }, { readyReplicas: 3 }), policy).allowed,
      true,
      'no backup running: scale down freely',
    );
  });

  test('the engine never changes after creation', () => {
    const res = validateDatabase(db({ engine: 'mysql', version: '8.0' }), db(), policy);
    assert.deepEqual(res, {
      allowed: false,
      message: 'spec.engine cannot change (postgres to mysql): create a new Database and migrate the data',
    });
  });

  test('a backup endpoint off the allow-list is refused when set; one already stored does not block other updates', () => {
    const evil = db({ backup: { endpoint: 'http://169.254.169.254/latest/meta-data' } });
    const res = validateDatabase(evil, undefined, policy);
    assert.equal(res.allowed, false);
    assert.match(res.allowed ? '' : res.message, /not on the operator's allow-list/);
    assert.doesNotMatch(res.allowed ? '' : res.message, /169\.254/, "the tenant's input is not echoed");
    assert.equal(
      validateDatabase(db({ backup: { endpoint: 'https://backups.example.com/v1' } }), undefined, policy).allowed,
      true,
    );
    assert.equal(
      validateDatabase(evil, evil, policy).allowed,
      true,
      'unchanged: judged by the reconciler, not blocking finalizer updates',
    );
  });

  test('an unsupported version is allowed with a warning', () => {
    assert.deepEqual(validateDatabase(db({ version: '13' }), undefined, policy), {
      allowed: true,
      warnings: [
        'spec.version 13 is not one the operator runs for postgres (14, 15, 16): the Database will be Degraded',
      ],
    });
  });
});

describe('Database defaulting', () => {
  test("a missing backup endpoint becomes the operator's own; a given one or disabled backups are left alone", () => {
    assert.deepEqual(defaultDatabase(db(), policy).spec.backup, { endpoint: policy.defaultEndpoint });
    assert.deepEqual(defaultDatabase(db({ backup: { enabled: true } }), policy).spec.backup, {
      enabled: true,
      endpoint: policy.defaultEndpoint,
    });
    assert.deepEqual(defaultDatabase(db({ backup: { endpoint: 'https://backups.example.com' } }), policy).spec.backup, {
      endpoint: 'https://backups.example.com',
    });
    assert.deepEqual(defaultDatabase(db({ backup: { enabled: false } }), policy).spec.backup, { enabled: false });
  });
});

const version = fc
  .tuple(fc.nat(99), fc.option(fc.nat(99), { nil: undefined }), fc.option(fc.nat(99), { nil: undefined }))
  .map(([a, b, c]) => [a, ...(b === undefined ? [] : [b, ...(c === undefined ? [] : [c])])].join('.'));
// Optional members are left out (never `undefined`), as in JSON from the API server.
const backup = fc.record({ enabled: fc.boolean(), endpoint: fc.webUrl() }, { requiredKeys: [], noNullPrototype: true });
const status = fc.record(
  {
    phase: fc.constantFrom('Provisioning' as const, 'Ready' as const, 'Degraded' as const, 'Deleting' as const),
    readyReplicas: fc.nat(9),
    observedGeneration: fc.nat(),
    endpoint: fc.string(),
  },
  { requiredKeys: [], noNullPrototype: true },
);
const meta = fc.record(
  {
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,30}$/),
    namespace: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
    uid: fc.uuid(),
    resourceVersion: fc.nat().map(String),
    generation: fc.nat(),
    annotations: fc.dictionary(fc.stringMatching(/^[a-z./]{1,20}$/), fc.string(), { noNullPrototype: true }),
  },
  { requiredKeys: ['name', 'namespace', 'uid', 'resourceVersion', 'generation'], noNullPrototype: true },
);
const storage = fc
  .tuple(fc.integer({ min: 1, max: 4096 }), fc.constantFrom('Mi', 'Gi', 'Ti'))
  .map(([n, u]) => `${n}${u}`);

const v1 = fc.record(
  {
    apiVersion: fc.constant('example.com/v1' as const),
    kind: fc.constant('Database' as const),
    metadata: meta,
    spec: fc.record(
      {
        engine: fc.constantFrom('postgres' as const, 'mysql' as const),
        version,
        replicas: fc.integer({ min: 1, max: 9 }),
        storage,
        backup,
      },
      { requiredKeys: ['engine', 'version', 'replicas', 'storage'], noNullPrototype: true },
    ),
    status,
  },
  { requiredKeys: ['apiVersion', 'kind', 'metadata', 'spec'], noNullPrototype: true },
);
const v1alpha1 = fc.record(
  {
    apiVersion: fc.constant('example.com/v1alpha1' as const),
    kind: fc.constant('Database' as const),
    metadata: meta,
    spec: fc.record(
      {
        image: fc.tuple(fc.constantFrom('postgres', 'mysql'), version).map(([e, v]) => `${e}:${v}`),
        instances: fc.integer({ min: 1, max: 9 }),
        storage,
        backup,
      },
      { requiredKeys: ['image', 'instances', 'storage'], noNullPrototype: true },
    ),
    status,
  },
  { requiredKeys: ['apiVersion', 'kind', 'metadata', 'spec'], noNullPrototype: true },
);

describe('Database conversion v1 <-> v1alpha1', () => {
  test('maps engine+version to image and replicas to instances', () => {
    const alpha = fromV1(db({ engine: 'mysql', version: '8.0.36', replicas: 2 }));
    assert.deepEqual(alpha.spec, { image: 'mysql:8.0.36', instances: 2, storage: '10Gi' });
    assert.equal(alpha.apiVersion, 'example.com/v1alpha1');
    assert.deepEqual(toV1(alpha), db({ engine: 'mysql', version: '8.0.36', replicas: 2 }));
  });

  test("round trips both ways through the registered webhook, each result valid for its version's schema (property)", async () => {
    const webhooks = new Webhooks();
    registerDatabaseWebhooks(webhooks, policy);
    await checkProperty(
      'v1 -> v1alpha1 -> v1',
      fc.property(v1, (obj: Database) => {
        const alpha = convertObject(webhooks, obj, 'example.com/v1alpha1');
        assert.deepEqual(validateAgainstSchema(DATABASE_V1ALPHA1, 'v1alpha1', alpha), []);
        assert.deepEqual(alpha.metadata, obj.metadata);
        assert.deepEqual(convertObject(webhooks, alpha, 'example.com/v1'), obj);
      }),
      { timeMs: fuzzTimeMs(400), file: import.meta.filename },
    );
    await checkProperty(
      'v1alpha1 -> v1 -> v1alpha1',
      fc.property(v1alpha1, (obj: DatabaseV1alpha1) => {
        const hub = convertObject(webhooks, obj, 'example.com/v1');
        assert.deepEqual(validateAgainstSchema(DATABASE, 'v1', hub), []);
        assert.deepEqual(convertObject(webhooks, hub, 'example.com/v1alpha1'), obj);
      }),
      { timeMs: fuzzTimeMs(400), file: import.meta.filename },
    );
  });
});
