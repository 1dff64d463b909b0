import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ComponentError } from './managed-process.js';
import { isPortClash } from './port-clash.js';
import { TestEnvError } from './test-env.js';

test('a component that could not bind its port is a port clash; other failures are not', () => {
  const etcdLog =
    '{"level":"fatal","msg":"discovery failed","error":"listen tcp 127.0.0.1:38779: bind: address already in use"}';
  assert.equal(isPortClash(new ComponentError('etcd', 'exited while waiting for it to be healthy', etcdLog)), true);
  assert.equal(
    isPortClash(new ComponentError('kube-apiserver', 'exited', 'error: invalid flag --secure-port=abc')),
    false,
  );
  assert.equal(isPortClash(new TestEnvError('bind: address already in use')), false, 'only a component log counts');
  assert.equal(isPortClash(new Error('address already in use')), false);
});
