import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, isConflict } from './api-error.js';
import { ApplyConflictError, isApplyConflict, parseApplyConflicts } from './apply-conflict-error.js';

// The causes as apimachinery's NewConflictError writes them (printManager for each owner).
const serverConflict = new ApiError({
  status: 409,
  reason: 'Conflict',
  message:
    'Apply failed with 2 conflicts: conflict with "kubectl": .spec.replicas, conflict with "kubectl-edit" using apps/v1: .spec.paused',
  details: {
    causes: [
      { reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.replicas' },
      {
        reason: 'FieldManagerConflict',
        message: 'conflict with "kubectl-edit" using apps/v1 at 2026-12-05T00:10:00Z',
        field: '.spec.paused',
      },
    ],
  },
  method: 'PATCH',
  path: '/apis/apps/v1/namespaces/ns/deployments/web',
});
const target = { kind: 'Deployment', namespace: 'ns', name: 'web', fieldManager: 'web-operator' };

test('an apply conflict names each field, its owner and how the owner wrote it', () => {
  const err = ApplyConflictError.from(serverConflict, target);
  assert.ok(err);
  assert.deepEqual(err.conflicts, [
    { field: '.spec.replicas', manager: 'kubectl', operation: 'Apply' },
    {
      field: '.spec.paused',
      manager: 'kubectl-edit',
      operation: 'Update',
      apiVersion: 'apps/v1',
      time: '2026-12-05T00:10:00Z',
    },
  ]);
  assert.match(err.message, /apply of Deployment ns\/web as "web-operator" conflicts with 2 fields/);
  assert.match(err.message, /\.spec\.replicas \(owned by "kubectl", by apply\)/);
  assert.match(
    err.message,
    /\.spec\.paused \(owned by "kubectl-edit", by an update through apps\/v1 at 2026-12-05T00:10:00Z\)/,
  );
  assert.match(err.message, /stop applying them/);
  assert.match(err.message, /force: true/);
});

test('an apply conflict is still an API conflict: status, reason, details and isConflict hold', () => {
  const err = ApplyConflictError.from(serverConflict, target)!;
  assert.ok(err instanceof ApiError && isConflict(err) && isApplyConflict(err));
  assert.equal(err.code, 'ERR_API');
  assert.equal(err.status, 409);
  assert.equal(err.path, serverConflict.path);
  assert.equal(err.details?.causes?.length, 2);
  assert.equal(err.cause, serverConflict);
  // One from another copy of the package is recognised by its shape.
  assert.ok(isApplyConflict({ code: 'ERR_API', status: 409, conflicts: [] }));
  assert.ok(!isApplyConflict(serverConflict));
});

test('a 409 without FieldManagerConflict causes, or another error, is not an apply conflict', () => {
  const plain = new ApiError({ status: 409, reason: 'Conflict', message: 'the object has been modified' });
  assert.equal(ApplyConflictError.from(plain, target), undefined);
  assert.equal(ApplyConflictError.from(new ApiError({ status: 422, message: 'x' }), target), undefined);
  assert.equal(ApplyConflictError.from(new Error('x'), target), undefined);
});

test('a cause naming a subresource owner, an escaped quote or an unknown form is still read', () => {
  const conflicts = parseApplyConflicts({
    causes: [
      {
        reason: 'FieldManagerConflict',
        message: 'conflict with "ctl" with subresource "status" using v1',
        field: '.status.x',
      },
      { reason: 'FieldManagerConflict', message: 'conflict with "a\\"b"', field: '.data.k' },
      { reason: 'FieldManagerConflict', message: 'something else', field: '.data.j' },
      { reason: 'FieldValueInvalid', message: 'not a conflict', field: '.data.z' },
    ],
  });
  assert.deepEqual(conflicts, [
    { field: '.status.x', manager: 'ctl', operation: 'Update', apiVersion: 'v1', subresource: 'status' },
    { field: '.data.k', manager: 'a"b', operation: 'Apply' },
    { field: '.data.j', manager: 'something else', operation: 'Update' },
  ]);
});
