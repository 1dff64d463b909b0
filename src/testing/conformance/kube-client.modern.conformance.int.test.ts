import { KubeClient } from '../../client/kube-client.js';
import { TestEnv } from '../control-plane/test-env.js';
import { describeClientConformance, conformanceCrds } from './client-conformance.js';

// The same suite against the current CRD-only API server (Kubernetes 1.36): generic tests run on
// the Note custom resource in place of ConfigMaps; tests of built-in kinds are skipped by name.
// Started with the alpha ShardedListAndWatch gate, so the shardSelector test runs here too.
describeClientConformance(
  'KubeClient against the Kubernetes 1.36 CRD-only API server conforms',
  async () => {
    const env = await TestEnv.start({
      server: 'modern',
      featureGates: { ShardedListAndWatch: true },
      crds: await conformanceCrds(),
    });
    try {
      const client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
      return {
        client,
        compact: async () => {
          await env.compact();
        },
        cleanup: async () => {
          await client.close();
          await env.stop();
        },
      };
    } catch (err) {
      await env.stop();
      throw err;
    }
  },
  {
    coreKinds: false,
    server: 'the Kubernetes 1.36 CRD-only API server',
    continueAfterCompaction: 'snapshot',
    shardedListAndWatch: true,
  },
);
