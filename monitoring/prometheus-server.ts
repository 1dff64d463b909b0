/**
 * A real Prometheus (Debian's `prometheus` package) for tests: loopback only, a free port, its own
 * temp dir for config, rules and TSDB, and a parent-death signal (setpriv) so a test runner killed
 * with kill -9 leaves no Prometheus behind. Queried through its HTTP API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { OperatorRuntimeError } from '../src/core/errors.js';
import { eventually } from '../src/testing/control-plane/eventually.js';
import { freePort } from '../src/testing/control-plane/free-port.js';

export const DEFAULT_PROMETHEUS_BINARY = '/usr/bin/prometheus';
/** How often it scrapes and evaluates rules: short, so a test sees alerts in seconds. */
export const DEFAULT_PROMETHEUS_INTERVAL_MS = 1000;

export interface PrometheusServerOptions {
  /** `host:port` targets per job name. */
  readonly scrapeTargets: Readonly<Record<string, readonly string[]>>;
  /** The content of one rule file (`groups:` …). */
  readonly rules: string;
  /** @defaultValue {@link DEFAULT_PROMETHEUS_INTERVAL_MS} */
  readonly intervalMs?: number;
  /** @defaultValue {@link DEFAULT_PROMETHEUS_BINARY} or `$PROMETHEUS` */
  readonly binary?: string;
}

export class PrometheusServerError extends OperatorRuntimeError {
  declare readonly code: 'ERR_PROMETHEUS_SERVER';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_PROMETHEUS_SERVER', message, options);
  }
}

export interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

export interface PromAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly state: 'pending' | 'firing' | 'inactive';
  readonly value: string;
}

export class PrometheusServer {
  private constructor(
    readonly url: string,
    private readonly dir: string,
    private readonly child: ChildProcess,
    private readonly output: () => string,
  ) {}

  static async start(options: PrometheusServerOptions): Promise<PrometheusServer> {
    const dir = await mkdtemp(join(tmpdir(), 'prometheus-test-'));
    const seconds = `${(options.intervalMs ?? DEFAULT_PROMETHEUS_INTERVAL_MS) / 1000}s`;
    await writeFile(join(dir, 'rules.yaml'), options.rules);
    await writeFile(
      join(dir, 'prometheus.yaml'),
      stringify({
        global: { scrape_interval: seconds, evaluation_interval: seconds, scrape_timeout: seconds },
        rule_files: [join(dir, 'rules.yaml')],
        scrape_configs: Object.entries(options.scrapeTargets).map(([job, targets]) => ({
          job_name: job,
          static_configs: [{ targets }],
        })),
      }),
    );
    // The port is free when asked, not when bound: retry the rare race with another process.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const args = [
        '--pdeathsig',
        'KILL',
        '--',
        options.binary ?? process.env.PROMETHEUS ?? DEFAULT_PROMETHEUS_BINARY,
        `--config.file=${join(dir, 'prometheus.yaml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ];
      const child = spawn('setpriv', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      const keep = (chunk: Buffer): void => {
        output = (output + chunk.toString()).slice(-8000);
      };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      let exited = false;
      child.on('exit', () => (exited = true));
      const server = new PrometheusServer(url, dir, child, () => output);
      try {
        await eventually(
          'Prometheus ready',
          async () => {
            if (exited) throw new PrometheusServerError(`prometheus exited: ${output}`);
            return (await fetch(`${url}/-/ready`)).ok;
          },
          { timeoutMs: 60_000, intervalMs: 200 },
        );
        return server;
      } catch (err) {
        await server.kill();
        if (attempt < 3 && /address already in use/.test(output)) continue;
        await rm(dir, { recursive: true, force: true });
        throw new PrometheusServerError(`Prometheus did not start: ${output}`, { cause: err });
      }
    }
  }

  /** Instant query; the samples of a vector result. */
  async query(promql: string): Promise<PromSample[]> {
    const body = await this.api<{ resultType: string; result: PromSample[] }>(
      `/api/v1/query?query=${encodeURIComponent(promql)}`,
    );
    return body.result;
  }

  async alerts(): Promise<PromAlert[]> {
    return (await this.api<{ alerts: PromAlert[] }>('/api/v1/alerts')).alerts;
  }

  async targets(): Promise<{ labels: Record<string, string>; health: string; lastError: string }[]> {
    return (
      await this.api<{ activeTargets: { labels: Record<string, string>; health: string; lastError: string }[] }>(
        '/api/v1/targets',
      )
    ).activeTargets;
  }

  /** Prometheus's own log lines (warnings and errors), for a failing test's message. */
  log(): string {
    return this.output();
  }

  async stop(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async api<T>(path: string): Promise<T> {
    const res = await fetch(`${this.url}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new PrometheusServerError(`${path}: ${body.error ?? res.status}`);
    return body.data;
  }

  private kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
      // Prometheus flushes its head block on SIGTERM; the test data is disposable.
      setTimeout(() => this.child.kill('SIGKILL'), 5000).unref();
    });
  }
}
