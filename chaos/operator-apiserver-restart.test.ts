/** Chaos: kube-apiserver restarted (etcd keeps its data) while the operator works. */
import { test } from 'node:test';
import { runOperatorScenario } from './support/operator-scenario.js';

test('the Database operator converges after kube-apiserver restarts', { timeout: 600_000 }, async () => {
  await runOperatorScenario({
    name: 'kube-apiserver restart',
    fault: async ({ bed, faults, notes }) => {
      const t0 = Date.now();
      await bed.env.restartApiServer();
      notes.apiServerDownMs = Date.now() - t0;
      faults.push('restart kube-apiserver');
    },
  });
});
