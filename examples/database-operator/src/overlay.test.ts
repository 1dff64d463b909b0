import { test } from 'node:test';
import assert from 'node:assert/strict';
import { overlay } from './overlay.js';

test('overlaying desired state that is already present changes nothing, server defaults kept', () => {
  const current = {
    spec: {
      replicas: 2,
      podManagementPolicy: 'OrderedReady',
      template: {
        spec: { containers: [{ name: 'db', image: 'postgres:16', terminationMessagePath: '/dev/termination-log' }] },
      },
    },
  };
  const before = structuredClone(current);
  overlay(current, {
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'db', image: 'postgres:16' }] } } },
  });
  assert.deepEqual(current, before);
});

test('a drifted field is restored and a changed list length replaces the list', () => {
  const current: Record<string, unknown> = { spec: { replicas: 5, ports: [{ port: 1 }, { port: 2 }] } };
  overlay(current, { spec: { replicas: 2, ports: [{ port: 5432 }] } });
  assert.deepEqual(current, { spec: { replicas: 2, ports: [{ port: 5432 }] } });
});
