/** List continue tokens: the snapshot's revision and the last key served, opaque to callers. */

export interface ContinuePosition {
  readonly revision: number;
  readonly after: string;
}

export function encodeContinue(pos: ContinuePosition): string {
  return Buffer.from(
    JSON.stringify({ v: 'fake.operator-runtime/v1', rv: pos.revision, start: pos.after }),
    'utf8',
  ).toString('base64url');
}

/** Undefined when the token is not one of ours (the server answers 400). */
export function decodeContinue(token: string): ContinuePosition | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      v?: unknown;
      rv?: unknown;
      start?: unknown;
    };
    if (parsed.v !== 'fake.operator-runtime/v1' || typeof parsed.rv !== 'number' || typeof parsed.start !== 'string')
      return undefined;
    return { revision: parsed.rv, after: parsed.start };
  } catch {
    return undefined;
  }
}
