import { KubeClient } from '../../client/kube-client.js';
import { TestEnv } from '../control-plane/test-env.js';
import { describeClientConformance, conformanceCrds } from './client-conformance.js';

describeClientConformance(
  'KubeClient against kube-apiserver conforms',
  async () => {
    const env = await TestEnv.start({ crds: await conformanceCrds() });
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
  { server: 'Kubernetes 1.20', fieldValidation: false },
);
