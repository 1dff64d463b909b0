import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../client/kube-client.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { readManifests } from '../testing/control-plane/manifests.js';
import { SharedInformer } from './informer.js';
import { clientListerWatcher } from './client-lister-watcher.js';

const crdFile = new URL('../../examples/quickstart/widget-crd.yaml', import.meta.url);
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;

// Regression (the informer property test on 1.36 once ended with listMode 'list'): right after it
// starts, a 1.36 API server answers watches with 429 "storage is (re)initializing" until its watch
// cache is filled, and a watch-list met that way used to fall back to a list.
test("Kubernetes 1.36: an informer started while the API server's storage is still initializing (429) syncs by watch-list once it is ready, without a list", async (t) => {
  const env = await TestEnv.start({ server: 'modern', crds: await readManifests(crdFile) });
  try {
    const admin = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
    await admin.create({ ...WIDGET, metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
    await admin.close();
    let metTooManyRequests = false;
    // The 429 window is a matter of timing: restart until the informer has met it (at once, as measured).
    for (let attempt = 1; attempt <= 3 && !metTooManyRequests; attempt++) {
      await env.restartApiServer();
      const client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
      const ac = new AbortController();
      const lw = clientListerWatcher(client, { ...WIDGET, namespace: 'default' });
      const informer = new SharedInformer(lw, { backoff: { initialMs: 100, maxMs: 500 } });
      const running = informer.start(ac.signal);
      try {
        await informer.waitForSync(ac.signal, 30_000);
        const h = informer.health();
        metTooManyRequests = h.lastError?.status === 429;
        const lastStatus = h.lastError?.status ?? 'none';
        t.diagnostic(`attempt ${attempt}: restarts ${h.restarts}, last error ${lastStatus}, listMode ${h.listMode}`);
        assert.equal(h.listMode, 'watch-list');
        assert.equal(h.lists, 1, 'one sync, no fallback list');
        assert.deepEqual(
          informer.reader.list().map((o) => o.metadata?.name),
          ['w'],
        );
      } finally {
        ac.abort();
        await running;
        await client.close();
      }
    }
    assert.ok(metTooManyRequests, 'the informer met the 429 (else this test proves nothing)');
  } finally {
    await env.stop();
  }
});
