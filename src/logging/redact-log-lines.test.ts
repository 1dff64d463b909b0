/**
 * Issue 18, item 6, end to end through the pino logger: credentials in message strings, printf
 * arguments and logged errors (free text the key-based redaction never saw).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from '../core/logger.js';
import { createLogger } from './create-logger.js';

function capture(): { log: Logger & { info: (...args: unknown[]) => void }; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { log: log as unknown as Logger & { info: (...args: unknown[]) => void }, lines };
}

test('a proxy URL with a password in the message string, or as a printf argument, is redacted', () => {
  const { log, lines } = capture();
  log.info('connecting through http://user:pw-SECRET@proxy:3128');
  log.info({ attempt: 1 }, 'connecting through %s', 'http://user:pw-SECRET@proxy:3128');
  log.info('config %j', { users: [{ user: { token: 'tok-SECRET' } }] });
  for (const line of lines) assert.ok(!JSON.stringify(line).includes('SECRET'), JSON.stringify(line));
  assert.equal(lines[0]!.msg, 'connecting through http://user:[Redacted]@proxy:3128');
  assert.equal(lines[1]!.attempt, 1);
});

test('a logged error whose message or cause carries a URL password or a bearer token is redacted, and still reads as an error', () => {
  const { log, lines } = capture();
  const cause = new Error('upstream said: Authorization: Bearer tok-SECRET');
  const err = new TypeError('Invalid URL: https://admin:pw-SECRET@10.0.0.1:6443', { cause });
  log.error({ err }, 'request failed');
  const text = JSON.stringify(lines[0]);
  assert.ok(!text.includes('SECRET'), text);
  const out = lines[0]!.err as { type: string; message: string; stack: string };
  assert.equal(out.type, 'TypeError');
  // pino appends the causes' messages to the error's own.
  assert.match(
    out.message,
    /^Invalid URL: https:\/\/admin:\[Redacted\]@10\.0\.0\.1:6443: upstream said: Authorization: Bearer \[Redacted\]$/,
  );
  assert.match(out.stack, /^TypeError: Invalid URL/);
  assert.equal(err.message, 'Invalid URL: https://admin:pw-SECRET@10.0.0.1:6443', "the caller's error is untouched");
});
