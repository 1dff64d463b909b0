import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { OperatorRuntimeError } from '../../core/errors.js';

/** A manifest file that is not valid YAML; the message names the file and the parser's complaint. */
export class ManifestError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INVALID_MANIFEST';

  constructor(message: string) {
    super('ERR_INVALID_MANIFEST', message);
  }
}

/** Reads every document of a YAML file as plain objects (empty documents skipped). */
export async function readManifests(path: string | URL): Promise<Record<string, unknown>[]> {
  const text = await readFile(path, 'utf8');
  const docs = parseAllDocuments(text);
  const out: Record<string, unknown>[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new ManifestError(`${String(path)}: ${doc.errors[0]!.message}`);
    const value = doc.toJS() as unknown;
    if (value && typeof value === 'object') out.push(value as Record<string, unknown>);
  }
  return out;
}
