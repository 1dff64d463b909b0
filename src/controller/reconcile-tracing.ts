/**
 * A controller's traces: what caused each key's next reconcile (noted as keys go into the queue),
 * and one span per reconcile with that trigger as attributes and links to its causes. The span is
 * the active context while the reconciler runs, so the client's API calls and the HTTP client's
 * external calls become its children. Built only when `@opentelemetry/api` is installed.
 */
import type { OtelApi, OtelSpan, OtelSpanContext, OtelTracer } from '../core/tracing.js';
import { recordError } from '../core/tracing.js';
import type { Result } from './result.js';

/**
 * What caused a key to be queued, as its reconcile's span shows it:
 * - `watch_event`: an add, update or delete of the controller's own kind (or of a watched kind
 *   mapped to the key);
 * - `owner_change`: an event of an owned object, mapped to its controlling owner;
 * - `requeue`: the previous reconcile of the key asked for it (`requeueAfter`) or failed (backoff);
 * - `external`: a `reconcileOn` trigger source;
 * - `enqueue`: `Controller.enqueue` (linked to the span active where it was called);
 * - `handover`: a shard moved to this replica.
 * `cluster` names the fleet member the event came from.
 */
export interface ReconcileTrigger {
  readonly type: 'watch_event' | 'owner_change' | 'requeue' | 'external' | 'enqueue' | 'handover';
  /** For a watch event or owner change: what happened to the object. */
  readonly event?: 'add' | 'update' | 'delete';
  /** For a watch event or owner change: the kind, `namespace/name` and resourceVersion of the object that changed. */
  readonly kind?: string;
  readonly object?: string;
  readonly resourceVersion?: string;
  /** The fleet member the event came from. */
  readonly cluster?: string;
  /** For a requeue: `requeue_after` or `error_backoff`. */
  readonly reason?: 'requeue_after' | 'error_backoff';
}

/** Causes remembered per key until its reconcile starts; beyond this they are counted, not linked. */
export const MAX_TRIGGER_LINKS = 8;

interface PendingTriggers {
  /** The first cause: a reconcile answers to what first made its key dirty. */
  readonly first: ReconcileTrigger;
  count: number;
  readonly links: OtelSpanContext[];
}

/** A reconcile's span, and the context the reconciler runs in. */
export interface ReconcileSpan {
  readonly span: OtelSpan;
  /** The trace id, to bind on the reconcile's log lines; undefined for a span that is not recorded. */
  readonly traceID: string | undefined;
  run<T>(fn: () => Promise<T>): Promise<T>;
}

export class ReconcileTracing {
  private readonly pending = new Map<string, PendingTriggers>();

  constructor(
    private readonly api: OtelApi,
    private readonly tracer: OtelTracer,
    private readonly controller: string,
  ) {}

  /**
   * Notes a cause of `key`'s next reconcile. An event cause becomes a zero-length span of its own
   * (a child of whatever span is active, e.g. the caller of `enqueue`) that the reconcile links to;
   * a requeue links to the reconcile that asked for it (`from`).
   */
  record(key: string, trigger: ReconcileTrigger, from?: OtelSpanContext): void {
    let pending = this.pending.get(key);
    if (!pending) this.pending.set(key, (pending = { first: trigger, count: 0, links: [] }));
    pending.count++;
    if (pending.links.length >= MAX_TRIGGER_LINKS) return;
    const link = from ?? this.causeSpan(trigger);
    if (link && this.api.trace.isSpanContextValid(link)) pending.links.push(link);
  }

  /** Starts the span of a reconcile of `key`, with what caused it; the causes noted so far are taken. */
  start(
    key: string,
    reconcileID: string,
    request: { namespace?: string; name: string; cluster?: string },
  ): ReconcileSpan {
    const { api } = this;
    const pending = this.pending.get(key);
    this.pending.delete(key);
    const span = this.tracer.startSpan(
      `reconcile ${this.controller}`,
      {
        // A root: the worker's own context (whatever started the manager) is not what caused it.
        root: true,
        kind: api.SpanKind.CONSUMER,
        attributes: {
          'operator_runtime.controller': this.controller,
          'operator_runtime.reconcile_id': reconcileID,
          'k8s.namespace.name': request.namespace ?? '',
          'operator_runtime.object.name': request.name,
          ...(request.cluster !== undefined && { 'operator_runtime.cluster': request.cluster }),
          ...triggerAttributes(pending),
        },
        links: pending?.links.map((context) => ({ context })),
      },
      api.ROOT_CONTEXT,
    );
    const context = api.trace.setSpan(api.context.active(), span);
    const spanContext = span.spanContext();
    return {
      span,
      traceID: api.trace.isSpanContextValid(spanContext) && span.isRecording() ? spanContext.traceId : undefined,
      run: (fn) => api.context.with(context, fn),
    };
  }

  /** Ends a reconcile's span with its result or error (`terminal`: not retried). */
  finish(reconcile: ReconcileSpan, key: string, outcome: ReconcileSpanOutcome): void {
    const { span } = reconcile;
    const { api } = this;
    span.setAttribute('operator_runtime.reconcile.outcome', outcome.label);
    if (outcome.result?.kind === 'requeueAfter')
      span.setAttribute('operator_runtime.reconcile.requeue_after_ms', outcome.result.requeueAfterMs);
    if (outcome.label === 'error' || outcome.label === 'terminal_error') {
      recordError(span, outcome.error);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: messageOf(outcome.error) });
    }
    const requeue =
      outcome.label === 'requeue_after' ? 'requeue_after' : outcome.label === 'error' ? 'error_backoff' : undefined;
    if (requeue) this.record(key, { type: 'requeue', reason: requeue }, span.spanContext());
    span.end();
  }

  private causeSpan(trigger: ReconcileTrigger): OtelSpanContext | undefined {
    const { api } = this;
    const parent = api.context.active();
    const span = this.tracer.startSpan(
      `${trigger.type} ${trigger.kind ?? this.controller}`,
      { kind: api.SpanKind.PRODUCER, attributes: triggerAttributes({ first: trigger, count: 1, links: [] }) },
      parent,
    );
    span.end();
    return span.spanContext();
  }
}

export interface ReconcileSpanOutcome {
  readonly label: 'success' | 'requeue_after' | 'error' | 'terminal_error';
  readonly result?: Result | void;
  readonly error?: unknown;
}

function triggerAttributes(pending: PendingTriggers | undefined): Record<string, string | number> {
  if (!pending) return { 'operator_runtime.trigger.type': 'unknown' };
  const t = pending.first;
  const attributes: Record<string, string | number> = { 'operator_runtime.trigger.type': t.type };
  if (t.event) attributes['operator_runtime.trigger.event'] = t.event;
  if (t.kind) attributes['operator_runtime.trigger.kind'] = t.kind;
  if (t.object) attributes['operator_runtime.trigger.object'] = t.object;
  if (t.resourceVersion) attributes['operator_runtime.trigger.resource_version'] = t.resourceVersion;
  if (t.cluster) attributes['operator_runtime.trigger.cluster'] = t.cluster;
  if (t.reason) attributes['operator_runtime.trigger.reason'] = t.reason;
  if (pending.count > 1) attributes['operator_runtime.trigger.count'] = pending.count;
  return attributes;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
