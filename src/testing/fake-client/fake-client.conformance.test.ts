import { describeClientConformance, conformanceCrds } from '../conformance/client-conformance.js';
import { FakeClient } from './fake-client.js';

describeClientConformance(
  'FakeClient conforms to the API server',
  async () => {
    const client = new FakeClient({ crds: await conformanceCrds(), requireNamespaces: true });
    return { client, compact: () => Promise.resolve(client.compact()), cleanup: () => Promise.resolve() };
  },
  { shardedListAndWatch: true },
);
