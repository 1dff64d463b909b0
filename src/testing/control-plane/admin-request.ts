/**
 * One raw request to an API server with the caller's identity headers: what TestEnv's `request()`
 * sends, whether it started the control plane or was handed an existing cluster.
 */
import { request, type Dispatcher } from 'undici';

export interface AdminResponse<T> {
  readonly status: number;
  /** The parsed JSON body, the text when it is not JSON (e.g. /readyz), or undefined when empty. */
  readonly body: T;
}

export async function adminRequest<T>(
  server: string,
  dispatcher: Dispatcher,
  identity: Record<string, string | string[]>,
  method: Dispatcher.HttpMethod,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<AdminResponse<T>> {
  const res = await request(`${server.replace(/\/$/, '')}${path}`, {
    method,
    dispatcher,
    headers: {
      ...identity,
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (e.g. /readyz)
  }
  return { status: res.statusCode, body: parsed as T };
}
