/**
 * One Database reconcile as a trace: the operator runs with the real OpenTelemetry SDK (a batch
 * processor and the OTLP/HTTP exporter) sending to a receiver this test runs on loopback, and the
 * backup service sits behind a recording forwarder that keeps the trace context each call carried.
 * The reconcile that starts the backup before delete must arrive with its trigger (the watch event
 * that set deletionTimestamp) as attributes and as a link, its API calls and the backup call as
 * children, and the backup service must have seen that very child's W3C trace context.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { KubeClient, createMetricsRegistry, type Kubeconfig } from 'operator-runtime';
import { TestEnv, eventually, readManifests, recordingLogger } from 'operator-runtime/testing';
import { BackupService } from './testing/backup-service.js';
import { DATABASE, FINALIZER, type Database } from './src/database.js';
import { createDatabaseOperator, type DatabaseOperator } from './src/operator.js';

const crdFile = new URL('./config/crd.yaml', import.meta.url);
const NS = 'default';

/** A span as OTLP/JSON carries it, attributes flattened. */
interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, string | number | boolean>;
  readonly links: readonly { traceId: string; spanId: string }[];
  readonly status: { code?: number };
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}
interface OtlpTraces {
  resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

/** The OTLP/HTTP receiver: POST /v1/traces with a JSON body, decoded into spans. */
async function startReceiver(): Promise<{ server: Server; url: string; spans: ReceivedSpan[] }> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      assert.equal(req.url, '/v1/traces');
      assert.match(String(req.headers['content-type']), /application\/json/);
      const body = JSON.parse(text) as OtlpTraces;
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push(decodeSpan(s));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, spans };
}

function decodeSpan(s: OtlpSpan): ReceivedSpan {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value } of s.attributes ?? [])
    attributes[key] = value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue);
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId ?? '',
    name: s.name,
    kind: s.kind,
    attributes,
    links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
    status: s.status ?? {},
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Forwards to the backup service, keeping each request's method, path and traceparent. */
async function startRecordingForwarder(
  target: string,
): Promise<{ server: Server; url: string; seen: { method: string; path: string; traceparent?: string }[] }> {
  const seen: { method: string; path: string; traceparent?: string }[] = [];
  const to = new URL(target);
  const server = createServer((req, res) => {
    const traceparent = req.headers.traceparent;
    seen.push({
      method: req.method ?? '',
      path: req.url ?? '',
      ...(typeof traceparent === 'string' && { traceparent }),
    });
    const upstream = httpRequest(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const close = (server: Server | undefined) =>
  new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

describe('the Database operator traced with the OpenTelemetry SDK, exported over OTLP/HTTP', () => {
  let env: TestEnv;
  let client: KubeClient;
  let operatorClient: KubeClient;
  let backups: BackupService;
  let forwarder: Awaited<ReturnType<typeof startRecordingForwarder>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let provider: NodeTracerProvider;
  let operator: DatabaseOperator;
  const log = recordingLogger();
  const stop = new AbortController();
  let running: Promise<void>;

  before(async () => {
    receiver = await startReceiver();
    provider = new NodeTracerProvider({
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.url }), { scheduledDelayMillis: 100 }),
      ],
    });
    // The global provider, AsyncLocalStorage context and W3C propagator, as an application sets them up.
    provider.register();
    env = await TestEnv.start({ crds: await readManifests(crdFile) });
    backups = new BackupService({ backupDurationMs: 300 });
    await backups.start();
    forwarder = await startRecordingForwarder(backups.url);
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    const registry = createMetricsRegistry();
    operatorClient = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig, registry });
    operator = createDatabaseOperator({
      client: operatorClient,
      registry,
      logger: log,
      backupEndpoint: forwarder.url,
      metricsPort: 0,
      healthPort: 0,
      backupPollMs: 200,
    });
    running = operator.manager.start(stop.signal);
  });

  after(async () => {
    stop.abort();
    await running;
    await operator?.close();
    await operatorClient?.close();
    await client?.close();
    await provider?.shutdown();
    await close(forwarder?.server);
    await backups?.stop();
    await close(receiver?.server);
    await env?.stop();
  });

  test('the reconcile that starts the backup: trigger link, API-call children, trace context at the backup service', async () => {
    await client.create({
      apiVersion: 'example.com/v1',
      kind: 'Database',
      metadata: { name: 'traced', namespace: NS },
      spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' },
    });
    await eventually('the finalizer', async () =>
      (await client.get<Database>(DATABASE, 'traced', { namespace: NS })).metadata.finalizers?.includes(FINALIZER),
    );
    await client.delete(DATABASE, 'traced', { namespace: NS });

    // The backup service saw the start of the backup, with a W3C trace context.
    const started = await eventually('the backup POST at the backup service', async () =>
      forwarder.seen.find((r) => r.method === 'POST' && r.path === '/backups'),
    );
    const traceparent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(started.traceparent ?? '');
    assert.ok(traceparent, `a sampled W3C traceparent reached the backup service, got ${started.traceparent}`);
    const [, traceId, callSpanId] = traceparent;

    // That context is the backup call's span, a child of one reconcile span.
    const backupCall = await eventually('the backup call span at the receiver', async () =>
      receiver.spans.find((s) => s.spanId === callSpanId),
    );
    assert.equal(backupCall.traceId, traceId);
    assert.equal(backupCall.name, 'POST');
    assert.equal(backupCall.attributes['http.request.method'], 'POST');
    assert.equal(backupCall.attributes['http.response.status_code'], 202);
    assert.equal(backupCall.attributes['url.full'], `${forwarder.url}/backups`);
    const reconcile = await eventually('the reconcile span', async () =>
      receiver.spans.find((s) => s.spanId === backupCall.parentSpanId),
    );
    assert.equal(reconcile.traceId, traceId);
    assert.equal(reconcile.name, 'reconcile database');
    assert.equal(reconcile.parentSpanId, '', 'a reconcile starts its own trace');
    assert.equal(reconcile.attributes['operator_runtime.controller'], 'database');
    assert.equal(reconcile.attributes['k8s.namespace.name'], NS);
    assert.equal(reconcile.attributes['operator_runtime.object.name'], 'traced');
    // The backup is still running: the reconcile asked to be requeued to poll it.
    assert.equal(reconcile.attributes['operator_runtime.reconcile.outcome'], 'requeue_after');
    assert.equal(reconcile.attributes['operator_runtime.reconcile.requeue_after_ms'], 200);

    // Its trigger: the watch event that set deletionTimestamp, as attributes and as a link.
    assert.equal(reconcile.attributes['operator_runtime.trigger.type'], 'watch_event');
    assert.equal(reconcile.attributes['operator_runtime.trigger.event'], 'update');
    assert.equal(reconcile.attributes['operator_runtime.trigger.kind'], 'Database');
    assert.equal(reconcile.attributes['operator_runtime.trigger.object'], `${NS}/traced`);
    const resourceVersion = reconcile.attributes['operator_runtime.trigger.resource_version'];
    assert.match(String(resourceVersion), /^\d+$/);
    assert.ok(reconcile.links.length >= 1, 'the reconcile links to what caused it');
    const cause = await eventually('the linked trigger span', async () =>
      receiver.spans.find((s) => s.spanId === reconcile.links[0]!.spanId),
    );
    assert.equal(cause.traceId, reconcile.links[0]!.traceId);
    assert.equal(cause.name, 'watch_event Database');
    assert.equal(cause.attributes['operator_runtime.trigger.resource_version'], resourceVersion);

    // Its API calls are its children, named by verb and kind, with their status codes.
    const children = receiver.spans.filter((s) => s.parentSpanId === reconcile.spanId);
    const apiCalls = children.filter((s) => s.attributes['k8s.verb'] !== undefined);
    assert.ok(apiCalls.length >= 1, `API-call children, got ${children.map((s) => s.name).join(', ')}`);
    for (const call of apiCalls) {
      assert.equal(call.traceId, traceId);
      assert.equal(call.name, `${call.attributes['k8s.verb']} ${call.attributes['k8s.kind']}`);
      assert.equal(typeof call.attributes['http.response.status_code'], 'number');
    }
    assert.ok(
      apiCalls.some((s) => s.name === 'patch Database/status'),
      `the BackupRunning status write among ${apiCalls.map((s) => s.name).join(', ')}`,
    );

    // The next reconcile (the poll) was caused by this one's requeue: its link points back here.
    const poll = await eventually('the requeued reconcile span', async () =>
      receiver.spans.find((s) => s.links.some((l) => l.spanId === reconcile.spanId)),
    );
    assert.equal(poll.attributes['operator_runtime.trigger.type'], 'requeue');
    assert.equal(poll.attributes['operator_runtime.trigger.reason'], 'requeue_after');

    // The reconcile's log lines carry its trace id beside its reconcileID.
    const reconcileID = reconcile.attributes['operator_runtime.reconcile_id'];
    const line = log.entries.find((e) => e.bindings.reconcileID === reconcileID && e.msg === 'backup running');
    assert.ok(line, 'the reconcile logged the running backup');
    assert.equal(line.bindings.traceID, traceId);
  });
});
