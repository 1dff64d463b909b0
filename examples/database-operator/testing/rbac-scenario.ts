/**
 * The reference operator's RBAC scenario, shared by rbac.int.test.ts (it passes under exactly the
 * generated roles) and rbac-minimal.int.test.ts (it fails with a 403 naming the resource when any
 * one rule or verb is taken away). One TestEnv, with OwnerReferencesPermissionEnforcement enabled
 * (as on OpenShift and hardened clusters) so the `databases/finalizers` rule is exercised.
 *
 * The scenario runs every API call the operator makes: its informers' list and watch, the
 * finalizer added and removed, status patches, each owned object created and patched back after
 * drift, Events created and (for a repeated failure) patched, the leader-election Lease created,
 * read and renewed, and a scraper's token and access reviews for secure metrics.
 */
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { KubeClient, createMetricsRegistry, kinds, type Kubeconfig } from 'operator-runtime';
import { TestEnv, freePort, kubectl, readManifests, recordingLogger } from 'operator-runtime/testing';
import { fileURLToPath } from 'node:url';
import { BackupService } from './backup-service.js';
import { DATABASE, FINALIZER } from '../src/database.js';
import { OPERATOR_NAME, OPERATOR_NAMESPACE } from '../src/manifest-manager.js';
import { LEASE_NAME, createDatabaseOperator } from '../src/operator.js';

export const RBAC_FILE = fileURLToPath(new URL('../config/rbac.yaml', import.meta.url));
const CRD_FILE = new URL('../config/crd.yaml', import.meta.url);
/** Where the scenario's Databases live. */
export const SCENARIO_NAMESPACE = 'rbac-scenario';
const SA_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_NAME}`;
const STEP_TIMEOUT_MS = 30_000;

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

/** A Role or ClusterRole of config/rbac.yaml bound to the operator's ServiceAccount. */
export interface OperatorRole {
  readonly kind: 'Role' | 'ClusterRole';
  readonly name: string;
  readonly namespace: string | undefined;
  readonly rules: readonly PolicyRule[];
}

export interface ScenarioOutcome {
  /** The first 403 the operator met (its message), or undefined when the scenario completed. */
  readonly forbidden: string | undefined;
  /** Wall time of the run. */
  readonly ms: number;
}

export class RbacHarness {
  private runs = 0;

  private constructor(
    readonly env: TestEnv,
    readonly admin: KubeClient,
    readonly backups: BackupService,
    private readonly operatorKubeconfig: Kubeconfig,
    readonly scraperToken: string,
    readonly operatorToken: string,
    /** The roles config/rbac.yaml binds to the operator, as committed. */
    readonly roles: readonly OperatorRole[],
  ) {}

  /** Starts the control plane, applies config/rbac.yaml and makes the operator's and a scraper's tokens. */
  static async start(): Promise<RbacHarness> {
    const env = await TestEnv.start({
      crds: await readManifests(CRD_FILE),
      controllerManager: true,
      simulatePods: { readyDelayMs: 100 },
      apiServerFlags: ['--enable-admission-plugins=OwnerReferencesPermissionEnforcement'],
    });
    try {
      for (const ns of [OPERATOR_NAMESPACE, SCENARIO_NAMESPACE])
        await kubectl(env.kubeconfigPath, ['create', 'namespace', ns]);
      for (const sa of [OPERATOR_NAME, 'scraper'])
        await kubectl(env.kubeconfigPath, ['create', 'serviceaccount', sa, '-n', OPERATOR_NAMESPACE]);
      await kubectl(env.kubeconfigPath, ['apply', '-f', RBAC_FILE]);
      await kubectl(env.kubeconfigPath, [
        'create',
        'clusterrolebinding',
        'scraper-metrics',
        `--clusterrole=${OPERATOR_NAME}-metrics-reader`,
        `--serviceaccount=${OPERATOR_NAMESPACE}:scraper`,
      ]);
      const tokenOf = async (sa: string): Promise<string> => {
        const res = await env.request<{ status: { token: string } }>(
          'POST',
          `/api/v1/namespaces/${OPERATOR_NAMESPACE}/serviceaccounts/${sa}/token`,
          { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
        );
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.status.token;
      };
      const operatorToken = await tokenOf(OPERATOR_NAME);
      const kc = structuredClone(env.kubeconfig) as unknown as { users: { user: Record<string, unknown> }[] };
      kc.users[0]!.user = { token: operatorToken };
      const admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
      const backups = new BackupService({ backupDurationMs: 200 });
      await backups.start();
      const roles = (await readManifests(RBAC_FILE))
        .filter(
          (o) =>
            (o.kind === 'Role' || o.kind === 'ClusterRole') && (o.metadata as { name: string }).name === OPERATOR_NAME,
        )
        .map((o) => ({
          kind: o.kind as 'Role' | 'ClusterRole',
          name: OPERATOR_NAME,
          namespace: (o.metadata as { namespace?: string }).namespace,
          rules: o.rules as PolicyRule[],
        }));
      return new RbacHarness(
        env,
        admin,
        backups,
        kc as unknown as Kubeconfig,
        await tokenOf('scraper'),
        operatorToken,
        roles,
      );
    } catch (err) {
      await env.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    await this.admin.close();
    await this.backups.stop();
    await this.env.stop();
  }

  /** Replaces a role's rules, and waits until the authorizer answers as `probe` expects. */
  async setRules(
    role: OperatorRole,
    rules: readonly PolicyRule[],
    probe: { readonly rule: PolicyRule; readonly verb: string; readonly allowed: boolean },
  ): Promise<void> {
    const type = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: role.kind };
    await this.admin.patch(
      type,
      role.name,
      { rules },
      { type: 'merge', ...(role.namespace ? { namespace: role.namespace } : {}) },
    );
    const [resource, subresource] = probe.rule.resources![0]!.split('/') as [string, string | undefined];
    const attributes = {
      verb: probe.verb,
      group: probe.rule.apiGroups![0],
      resource,
      ...(subresource ? { subresource } : {}),
      namespace: role.namespace ?? SCENARIO_NAMESPACE,
      ...(probe.rule.resourceNames ? { name: probe.rule.resourceNames[0] } : {}),
    };
    await waitFor(
      undefined,
      `the authorizer to ${probe.allowed ? 'allow' : 'deny'} ${probe.verb} ${probe.rule.resources![0]}`,
      async () => {
        const res = await this.env.request<{ status: { allowed: boolean } }>(
          'POST',
          '/apis/authorization.k8s.io/v1/subjectaccessreviews',
          {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: SA_USER,
              groups: [
                'system:serviceaccounts',
                `system:serviceaccounts:${OPERATOR_NAMESPACE}`,
                'system:authenticated',
              ],
              resourceAttributes: attributes,
            },
          },
        );
        return res.status === 201 && res.body.status.allowed === probe.allowed;
      },
    );
  }

  /**
   * Runs the operator under the ServiceAccount through the whole scenario. Resolves with the first
   * 403 it meets (the run stops there), or with none once every step passed; rejects when a step
   * fails for another reason.
   */
  async runScenario(): Promise<ScenarioOutcome> {
    const started = Date.now();
    const run = ++this.runs;
    const name = `db-${run}`;
    const identity = `rbac-run-${run}`;
    const log = recordingLogger();
    const client = await KubeClient.fromKubeconfig({ kubeconfig: this.operatorKubeconfig });
    const metricsPort = await freePort();
    const operator = createDatabaseOperator({
      client,
      registry: createMetricsRegistry(),
      logger: log,
      backupEndpoint: this.backups.url,
      leaderElectionNamespace: OPERATOR_NAMESPACE,
      identity,
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
      metricsPort,
      healthPort: 0,
      secureMetrics: {},
      backupPollMs: 200,
    });
    const stopOperator = new AbortController();
    const running = operator.manager.start(stopOperator.signal).catch(() => undefined);
    const stopSteps = new AbortController();
    let forbiddenTimer: NodeJS.Timeout | undefined;
    const forbidden = new Promise<string>((resolve) => {
      forbiddenTimer = setInterval(() => {
        const found = firstForbidden(log.entries);
        if (found) resolve(found);
      }, 50);
    });
    const steps = this.steps(name, identity, metricsPort, stopSteps.signal).then(
      () => firstForbidden(log.entries),
      (err: unknown) => {
        // A step that failed because of a 403 (a scrape refused, say) is that 403's outcome.
        const forbiddenFirst = firstForbidden(log.entries);
        if (forbiddenFirst) return forbiddenFirst;
        // What the operator complained about says why a step never converged.
        const complaints = log.entries
          .filter((e) => e.level === 'warn' || e.level === 'error')
          .slice(-5)
          .map((e) => `${e.msg ?? ''} ${errorText(e.obj.err)}`);
        throw new Error(
          `${err instanceof Error ? err.message : String(err)}; the operator's last warnings: ${complaints.join(' | ') || 'none'}`,
          { cause: err },
        );
      },
    );
    try {
      const result = await Promise.race([steps, forbidden]);
      return { forbidden: result, ms: Date.now() - started };
    } finally {
      clearInterval(forbiddenTimer);
      stopSteps.abort();
      await steps.catch(() => undefined);
      stopOperator.abort();
      await running;
      await operator.close();
      await client.close();
      await this.cleanUp(name);
    }
  }

  private async steps(name: string, identity: string, metricsPort: number, signal: AbortSignal): Promise<void> {
    const { admin } = this;
    const ns = SCENARIO_NAMESPACE;
    const get = () => admin.get(DATABASE, name, { namespace: ns });
    await admin.create({
      apiVersion: 'example.com/v1',
      kind: 'Database',
      metadata: { name, namespace: ns },
      spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' },
    });
    await waitFor(signal, `${name} Ready`, async () => {
      const db = await get();
      return db.status?.phase === 'Ready' && db.metadata.finalizers?.includes(FINALIZER);
    });
    await waitFor(
      signal,
      'the operator to hold the Lease',
      async () =>
        (await admin.get(kinds.Lease, LEASE_NAME, { namespace: OPERATOR_NAMESPACE })).spec?.holderIdentity === identity,
    );

    // A spec change: the ConfigMap (max_connections) and the StatefulSet (replicas) are patched.
    await admin.patch(DATABASE, name, { spec: { replicas: 2 } }, { namespace: ns, type: 'merge' });
    await waitFor(signal, `${name} Ready with 2 replicas`, async () => {
      const db = await get();
      return (
        db.status?.phase === 'Ready' &&
        db.status.readyReplicas === 2 &&
        db.status.observedGeneration === db.metadata.generation
      );
    });
    // Drift: a hand-edited Service is patched back.
    await admin.patch(
      kinds.Service,
      name,
      { spec: { ports: [{ name: 'postgres', port: 1234, targetPort: 'postgres' }] } },
      { namespace: ns, type: 'merge' },
    );
    await waitFor(
      signal,
      'the Service port restored',
      async () => (await admin.get(kinds.Service, name, { namespace: ns })).spec?.ports?.[0]?.port === 5432,
    );

    // Secure metrics: the operator reviews the scraper's token and access.
    assert.equal(await scrape(metricsPort, this.scraperToken), 200, 'the metrics reader may scrape');
    assert.equal(await scrape(metricsPort, this.operatorToken), 403, 'the operator itself is no metrics reader');

    // Deletion with the backup service down: BackupFailed repeats (one Event, patched), then succeeds.
    this.backups.setFaults({ down: true });
    try {
      await admin.delete(DATABASE, name, { namespace: ns });
      await waitFor(signal, 'a repeated BackupFailed event', async () =>
        (await this.eventsOf(name)).some(
          // Written as events.k8s.io/v1, a repeat is `series.count` (core/v1's `count` where it falls back).
          (e) => e.reason === 'BackupFailed' && (e.series?.count ?? e.count ?? 1) >= 2,
        ),
      );
    } finally {
      this.backups.setFaults({});
    }
    await waitFor(signal, `${name} gone`, async () =>
      get().then(
        () => false,
        (err: { status?: number }) => err.status === 404,
      ),
    );
    const reasons = (await this.eventsOf(name)).map((e) => e.reason);
    for (const reason of ['SecretCreated', 'BackupFailed', 'BackedUp'])
      assert.ok(reasons.includes(reason), `event ${reason} recorded (got ${reasons.join(', ')})`);
  }

  private async eventsOf(name: string): Promise<{ reason?: string; count?: number; series?: { count?: number } }[]> {
    const list = await this.admin.list(kinds.Event, {
      namespace: SCENARIO_NAMESPACE,
      fieldSelector: `involvedObject.name=${name}`,
    });
    return list.items;
  }

  /** Leaves nothing behind for the next run: the Database (finalizer dropped), the Lease, the backup faults. */
  private async cleanUp(name: string): Promise<void> {
    this.backups.setFaults({});
    const ignore404 = (err: { status?: number }) => {
      if (err.status !== 404) throw err;
    };
    await this.admin
      .patch(DATABASE, name, { metadata: { finalizers: null } }, { namespace: SCENARIO_NAMESPACE, type: 'merge' })
      .catch(ignore404);
    await this.admin.delete(DATABASE, name, { namespace: SCENARIO_NAMESPACE }).catch(ignore404);
    await this.admin.delete(kinds.Lease, LEASE_NAME, { namespace: OPERATOR_NAMESPACE }).catch(ignore404);
    await waitFor(undefined, `${name} deleted`, () =>
      this.admin.get(DATABASE, name, { namespace: SCENARIO_NAMESPACE }).then(
        () => false,
        (err: { status?: number }) => err.status === 404,
      ),
    );
  }
}

/** The message of the first logged error that is a 403. */
function firstForbidden(entries: readonly { obj: Record<string, unknown> }[]): string | undefined {
  for (const e of entries) {
    const text = errorText(e.obj.err);
    if (/\b403 Forbidden\b/.test(text)) return text;
  }
  return undefined;
}

/** A logged `err`: an Error, a summary with a message (the watcher's), or a message string. */
function errorText(err: unknown): string {
  if (typeof err === 'string') return err;
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : '';
}

function scrape(port: number, token: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    request(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        rejectUnauthorized: false,
        headers: { authorization: `Bearer ${token}` },
      },
      (res) => {
        res.resume().on('end', () => resolve(res.statusCode!));
      },
    )
      .on('error', reject)
      .end();
  });
}

/** Polls `check` until truthy; stops (rejecting) at once when `signal` aborts, so an abandoned run does nothing more. */
async function waitFor(signal: AbortSignal | undefined, what: string, check: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  let last: unknown;
  for (;;) {
    if (signal?.aborted) throw new Error(`abandoned while waiting for ${what}`);
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${STEP_TIMEOUT_MS} ms waiting for ${what}${last instanceof Error ? ` (last error: ${last.message})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One role with part of it taken away, and how to tell the authorizer has seen it. */
export interface Removal {
  /** e.g. `ClusterRole database-operator: patch databases/status`. */
  readonly title: string;
  readonly role: OperatorRole;
  readonly reducedRules: readonly PolicyRule[];
  readonly probe: { readonly rule: PolicyRule; readonly verb: string };
  /** The resource a 403 must name, as the API server writes it (`resource "databases/status"`). */
  readonly resource: string;
}

const describeRule = (rule: PolicyRule): string =>
  `${rule.verbs.join(',')} ${rule.resources!.join(',')}${rule.resourceNames ? ` named ${rule.resourceNames.join(',')}` : ''}`;

/** Every rule of every role, one at a time. */
export function ruleRemovals(roles: readonly OperatorRole[]): Removal[] {
  return roles.flatMap((role) =>
    role.rules.map((rule, i) => ({
      title: `${role.kind} ${role.name}: ${describeRule(rule)}`,
      role,
      reducedRules: role.rules.filter((_, j) => j !== i),
      probe: { rule, verb: rule.verbs[0]! },
      resource: rule.resources![0]!,
    })),
  );
}

/** Every verb of every rule, one at a time (a rule left with no verb is dropped). */
export function verbRemovals(roles: readonly OperatorRole[]): Removal[] {
  return roles.flatMap((role) =>
    role.rules.flatMap((rule, i) =>
      rule.verbs.map((verb) => {
        const rest = rule.verbs.filter((v) => v !== verb);
        const reducedRules = role.rules.flatMap((r, j) =>
          j !== i ? [r] : rest.length > 0 ? [{ ...r, verbs: rest }] : [],
        );
        return {
          title: `${role.kind} ${role.name}: ${verb} ${rule.resources!.join(',')}${rule.resourceNames ? ` named ${rule.resourceNames.join(',')}` : ''}`,
          role,
          reducedRules,
          probe: { rule, verb },
          resource: rule.resources![0]!,
        };
      }),
    ),
  );
}

/** Runs the scenario with `removal` applied, then restores the role; the outcome of the run. */
export async function runWithout(harness: RbacHarness, removal: Removal): Promise<ScenarioOutcome> {
  await harness.setRules(removal.role, removal.reducedRules, { ...removal.probe, allowed: false });
  try {
    return await harness.runScenario();
  } finally {
    await harness.setRules(removal.role, removal.role.rules, { ...removal.probe, allowed: true });
  }
}
