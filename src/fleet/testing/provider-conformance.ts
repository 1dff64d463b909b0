/**
 * What every `ClusterProvider` promises (cluster-provider.ts), as one suite run against each
 * provider: an aborted signal engages nothing, `start` resolves once its signal aborts and reports
 * nothing after, engaged clusters have DNS-label names and revisions that are no credential, and
 * what a provider says about itself carries no credential either.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import {
  validateClusterName,
  type ClusterEvents,
  type ClusterProvider,
  type MemberCluster,
} from '../cluster-provider.js';
import { TOKEN } from './kubeconfig-fixtures.js';

export interface ConformanceSubject {
  /** A provider whose source holds the clusters `member-a` and `member-b` (kubeconfigs with {@link TOKEN}). */
  readonly provider: ClusterProvider;
  /** Resolves once the provider has had the chance to report what its source holds. */
  settled(engaged: readonly MemberCluster[]): Promise<void>;
  /** Changes the source after the provider stopped (adds a cluster), when the source can change. */
  change?(): Promise<void>;
  cleanup(): Promise<void>;
}

export function providerConformance(name: string, make: () => Promise<ConformanceSubject>): void {
  const record = (): { events: ClusterEvents; engaged: MemberCluster[]; disengaged: string[] } => {
    const engaged: MemberCluster[] = [];
    const disengaged: string[] = [];
    return {
      events: { engage: (c) => engaged.push(c), disengage: (n) => void disengaged.push(n) },
      engaged,
      disengaged,
    };
  };

  test(`${name}: an already aborted signal engages nothing and start resolves`, async () => {
    const s = await make();
    try {
      const r = record();
      await s.provider.start(AbortSignal.abort(), r.events);
      assert.deepEqual(r.engaged, []);
      assert.deepEqual(r.disengaged, []);
    } finally {
      await s.cleanup();
    }
  });

  test(`${name}: engaged clusters have DNS-label names, and neither revisions nor the description hold a credential`, async () => {
    const s = await make();
    const r = record();
    const stop = new AbortController();
    const run = s.provider.start(stop.signal, r.events);
    try {
      await s.settled(r.engaged);
      assert.deepEqual(r.engaged.map((c) => c.name).sort(), ['member-a', 'member-b']);
      for (const c of r.engaged) {
        assert.equal(validateClusterName(c.name), c.name);
        assert.ok(c.revision.length > 0 && c.revision.length <= 128, `revision ${c.revision}`);
        assert.ok(!c.revision.includes(TOKEN));
        // What a fleet might log of a member (a structured logger serializes it as JSON).
        assert.ok(!JSON.stringify(c).includes(TOKEN), JSON.stringify(c));
      }
      assert.ok(!s.provider.description.includes(TOKEN));
      assert.ok(!inspect(s.provider.requiredPermissions?.() ?? []).includes(TOKEN));
    } finally {
      stop.abort();
      await run;
      await s.cleanup();
    }
  });

  test(`${name}: start stays pending while the signal is live, resolves when it aborts, and reports nothing after`, async () => {
    const s = await make();
    const r = record();
    const stop = new AbortController();
    let resolved = false;
    const run = s.provider.start(stop.signal, r.events).then(() => {
      resolved = true;
    });
    try {
      await s.settled(r.engaged);
      assert.equal(resolved, false);
      stop.abort();
      await run;
      const seen = [r.engaged.length, r.disengaged.length];
      await s.change?.();
      await new Promise((res) => setImmediate(res));
      assert.deepEqual([r.engaged.length, r.disengaged.length], seen);
    } finally {
      stop.abort();
      await run;
      await s.cleanup();
    }
  });
}
