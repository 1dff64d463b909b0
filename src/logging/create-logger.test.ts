import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from '../core/logger.js';
import { createLogger, DEFAULT_LOG_LEVEL } from './create-logger.js';
import type { LoggerOptions } from './create-logger.js';

/** A logger whose lines land in an array, parsed. */
function capture(options: Omit<LoggerOptions, 'destination'> = {}): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log: Logger = createLogger({
    ...options,
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { log, lines };
}

test("lines are JSON with a string level, an ISO time, the object's fields and the message", () => {
  const { log, lines } = capture({ base: { operator: 'db' } });
  log.info({ controller: 'widgets', namespace: 'ns', name: 'w1', reconcileID: 'r-1' }, 'reconciled');
  assert.equal(lines.length, 1);
  const line = lines[0]!;
  assert.equal(line.level, 'info');
  assert.equal(line.msg, 'reconciled');
  assert.equal(line.operator, 'db');
  assert.equal(line.reconcileID, 'r-1');
  assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test('the level option drops lines below it; the default is info', () => {
  assert.equal(DEFAULT_LOG_LEVEL, 'info');
  const quiet = capture();
  quiet.log.debug({}, 'hidden');
  quiet.log.info({}, 'shown');
  assert.deepEqual(
    quiet.lines.map((l) => l.msg),
    ['shown'],
  );
  const verbose = capture({ level: 'debug' });
  verbose.log.debug({}, 'visible');
  assert.deepEqual(
    verbose.lines.map((l) => l.level),
    ['debug'],
  );
  const warnOnly = capture({ level: 'warn' });
  warnOnly.log.info({}, 'no');
  warnOnly.log.error({}, 'yes');
  assert.deepEqual(
    warnOnly.lines.map((l) => l.msg),
    ['yes'],
  );
});

test('a child logger carries its bindings on every line', () => {
  const { log, lines } = capture({ name: 'op' });
  const child = log.child({ controller: 'widgets' }).child({ reconcileID: 'r-2' });
  child.warn({ attempt: 2 }, 'retrying');
  assert.equal(lines[0]!.logger, 'op');
  assert.equal(lines[0]!.controller, 'widgets');
  assert.equal(lines[0]!.reconcileID, 'r-2');
  assert.equal(lines[0]!.attempt, 2);
});

test('credentials never reach a line: headers, tokens, passwords and kubeconfig keys at any depth', () => {
  const { log, lines } = capture();
  const kubeconfig = {
    users: [{ name: 'admin', user: { token: 'sekrit-token', 'client-key-data': 'LS0tLS1CRUdJTi', password: 'pw' } }],
    clusters: [{ name: 'c', cluster: { server: 'https://k8s:6443' } }],
  };
  log.info(
    {
      req: { method: 'GET', headers: { Authorization: 'Bearer abc.def', accept: 'application/json' } },
      kubeconfig,
      oidc: { config: { 'id-token': 'jwt', 'refresh-token': 'r', 'client-secret': 's' } },
    },
    'request',
  );
  const text = JSON.stringify(lines[0]);
  for (const leaked of ['Bearer abc.def', 'sekrit-token', 'LS0tLS1CRUdJTi', '"pw"', 'jwt', '"r"', '"s"'])
    assert.ok(!text.includes(leaked), `${leaked} leaked: ${text}`);
  assert.equal(
    (lines[0]!.req as { headers: Record<string, unknown> }).headers.accept,
    'application/json',
    'other fields stay',
  );
  assert.equal(kubeconfig.users[0]!.user.token, 'sekrit-token', "the caller's object is not mutated");
  assert.match(text, /https:\/\/k8s:6443/);
});

test("a Secret's data and stringData are redacted wherever the Secret appears; a ConfigMap's data is kept", () => {
  const { log, lines } = capture();
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'ns' },
    data: { password: 'cGFzcw==' },
    stringData: { url: 'postgres://u:p@h' },
  };
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { mode: 'fast' } };
  log.info(secret, 'as the object');
  log.info({ object: secret, related: configMap }, 'nested');
  log.info({ list: { kind: 'SecretList', items: [secret] } }, 'in a list');
  for (const line of lines) {
    const text = JSON.stringify(line);
    assert.ok(!text.includes('cGFzcw=='), `data leaked: ${text}`);
    assert.ok(!text.includes('postgres://'), `stringData leaked: ${text}`);
  }
  assert.equal(lines[0]!.data, '[Redacted]');
  assert.deepEqual(
    (lines[1]!.object as { metadata: unknown }).metadata,
    { name: 'db', namespace: 'ns' },
    'the Secret is still identifiable',
  );
  assert.deepEqual((lines[1]!.related as { data: unknown }).data, { mode: 'fast' });
  assert.equal(secret.data.password, 'cGFzcw==', 'the Secret itself is untouched');
});

test('child bindings and extra redactKeys are redacted too', () => {
  const { log, lines } = capture({ redactKeys: ['apiKey'] });
  log.child({ token: 'child-token' }).info({ vendor: { APIKEY: 'k-123' } }, 'call');
  const text = JSON.stringify(lines[0]);
  assert.ok(!text.includes('child-token'), text);
  assert.ok(!text.includes('k-123'), text);
});

test('errors are still serialized with their message and stack', () => {
  const { log, lines } = capture();
  log.error({ err: new Error('boom') }, 'reconcile failed');
  const err = lines[0]!.err as { message: string; stack: string; type: string };
  assert.equal(err.message, 'boom');
  assert.equal(err.type, 'Error');
  assert.match(err.stack, /boom/);
});
