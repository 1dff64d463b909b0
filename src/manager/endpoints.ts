/**
 * The manager's HTTP endpoints as members of its "servers" group: the webhook server, the console,
 * /metrics (plain or secure) and /healthz + /readyz (on the metrics server when they share a port).
 * Each listens when started (ready once listening) and closes when stopped.
 */
import type { Registry } from 'prom-client';
import type { Client } from '../client/contracts.js';
import { whenAborted } from '../core/abort.js';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { ConsoleServer } from '../console/console-server.js';
import type { ConsoleOptions } from '../console/console-options.js';
import type { ConsoleState } from '../console/console-state.js';
import type { Webhooks } from '../webhook/webhooks.js';
import { WebhookServer, type WebhookServerOptions } from '../webhook/webhook-server.js';
import { runChecks, type HealthCheck } from './health-checks.js';
import { EndpointServer, type RouteHandler } from './http-server.js';
import type { GroupMember } from './runnable-group.js';
import {
  DEFAULT_SECURE_METRICS_PORT,
  defaultBindHost,
  secureEndpointOptions,
  type SecureMetricsOptions,
} from './secure-metrics.js';

/** controller-runtime's defaults. @defaultValue 8080 */
export const DEFAULT_METRICS_PORT = 8080;
/** @defaultValue 8081 */
export const DEFAULT_HEALTH_PORT = 8081;

/** The manager's options about its endpoints (`ManagerOptions` documents each). */
export interface EndpointsOptions {
  readonly metricsPort?: number;
  readonly secureMetrics?: SecureMetricsOptions;
  readonly healthPort?: number;
  readonly bindHost?: string;
  readonly console?: ConsoleOptions;
  readonly webhook?: WebhookServerOptions;
}

export interface EndpointsDeps {
  readonly client: Client;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly webhooks: Webhooks;
  readonly console: ConsoleState | undefined;
  readonly healthChecks: ReadonlyMap<string, HealthCheck>;
  readonly readyChecks: ReadonlyMap<string, HealthCheck>;
}

interface Closable {
  close(): Promise<void>;
}

/** A server as a group member: listens when started, ready once listening, closed when stopped. */
function serving(name: string, listen: () => Promise<Closable>): GroupMember {
  let listened!: () => void;
  let failed!: (err: unknown) => void;
  const listening = new Promise<void>((resolve, reject) => {
    listened = resolve;
    failed = reject;
  });
  // Awaited by the group's start; a failed listen also rejects the runnable, reported there.
  listening.catch(() => {});
  return {
    name,
    ready: () => listening,
    runnable: {
      async start(signal) {
        let server: Closable;
        try {
          server = await listen();
        } catch (err) {
          failed(err);
          throw err;
        }
        listened();
        await whenAborted(signal);
        await server.close();
      },
    },
  };
}

/** Where the manager's endpoints listen, once started (undefined before, and for an endpoint turned off). */
export interface ManagerEndpoints {
  /** The port /metrics listens on. */
  readonly metricsPort: number | undefined;
  /** The port /healthz and /readyz listen on (the metrics port when they share it). */
  readonly healthPort: number | undefined;
  /** The console's URL. */
  readonly consoleUrl: string | undefined;
  /** The port the webhook server listens on. */
  readonly webhookPort: number | undefined;
  /** The certificate (PEM) the webhook server presents now: the `caBundle` when it is self-signed. */
  readonly webhookCertificatePem: string | undefined;
}

export class Endpoints implements ManagerEndpoints {
  webhook: WebhookServer | undefined;
  console: ConsoleServer | undefined;
  metrics: EndpointServer | undefined;
  /** The metrics server itself when both share a port. */
  health: EndpointServer | undefined;

  constructor(
    private readonly options: EndpointsOptions,
    private readonly deps: EndpointsDeps,
  ) {}

  get metricsPort(): number | undefined {
    return this.metrics?.boundPort;
  }

  get healthPort(): number | undefined {
    return this.health?.boundPort;
  }

  get consoleUrl(): string | undefined {
    return this.console?.url;
  }

  get webhookPort(): number | undefined {
    return this.webhook?.port;
  }

  get webhookCertificatePem(): string | undefined {
    return this.webhook?.certificatePem;
  }

  /**
   * The servers in start order. The webhook server comes first (the API server may call admission
   * or conversion webhooks as soon as our caches list) and so stops last: writes and conversions
   * keep being answered while everything else stops.
   */
  members(): GroupMember[] {
    const { options, deps } = this;
    if (deps.webhooks.size > 0 && !options.webhook) {
      throw new InvalidOptionError(
        'webhook',
        'webhook handlers are registered but the manager has no webhook server options (port, certDir or certFile/keyFile)',
      );
    }
    const host = options.bindHost ?? defaultBindHost();
    const secure = options.secureMetrics;
    const metricsPort = options.metricsPort ?? (secure ? DEFAULT_SECURE_METRICS_PORT : DEFAULT_METRICS_PORT);
    const healthPort = options.healthPort ?? DEFAULT_HEALTH_PORT;
    const healthRoutes = new Map([
      ['/healthz', checkRoute(deps.healthChecks)],
      ['/readyz', checkRoute(deps.readyChecks)],
    ]);
    const metricsRoute: RouteHandler = async () => ({
      status: 200,
      contentType: deps.registry.contentType,
      body: await deps.registry.metrics(),
    });
    const out: GroupMember[] = [];
    const webhook = options.webhook;
    if (webhook) out.push(serving('webhook-server', () => this.listenWebhook(webhook, host)));
    const state = deps.console;
    if (state) out.push(serving('console-server', () => this.listenConsole(state)));
    if (metricsPort > 0 && metricsPort === healthPort) {
      out.push(
        serving('metrics-server', async () => {
          this.metrics = new EndpointServer(host, metricsPort, new Map([['/metrics', metricsRoute], ...healthRoutes]));
          this.health = this.metrics;
          await this.metrics.listen();
          return this.metrics;
        }),
      );
      return out;
    }
    if (metricsPort > 0) {
      out.push(
        serving('metrics-server', async () => {
          const serverOptions = secure
            ? await secureEndpointOptions(secure, { client: deps.client, clock: deps.clock, logger: deps.logger })
            : {};
          this.metrics = new EndpointServer(host, metricsPort, new Map([['/metrics', metricsRoute]]), serverOptions);
          await this.metrics.listen();
          return this.metrics;
        }),
      );
    }
    if (healthPort > 0) {
      out.push(
        serving('health-server', async () => {
          this.health = new EndpointServer(host, healthPort, healthRoutes);
          await this.health.listen();
          return this.health;
        }),
      );
    }
    return out;
  }

  private async listenWebhook(options: WebhookServerOptions, defaultHost: string): Promise<WebhookServer> {
    const { registry, logger, clock } = this.deps;
    this.webhook = new WebhookServer(this.deps.webhooks, options, { registry, logger, clock, defaultHost });
    await this.webhook.listen();
    return this.webhook;
  }

  private async listenConsole(state: ConsoleState): Promise<ConsoleServer> {
    const c = this.options.console;
    // An empty host means the default, as before.
    this.console = new ConsoleServer(
      () => state.snapshot(),
      {
        clock: this.deps.clock,
        ...omitUndefined({ port: c?.port, host: c?.host || undefined, allowedHosts: c?.allowedHosts }),
      },
      (controller, key) => state.timeline(controller, key),
    );
    await this.console.listen();
    return this.console;
  }
}

function checkRoute(checks: ReadonlyMap<string, HealthCheck>): RouteHandler {
  return async () => {
    const result = await runChecks(checks);
    return { status: result.ok ? 200 : 500, contentType: 'text/plain; charset=utf-8', body: result.body };
  };
}
