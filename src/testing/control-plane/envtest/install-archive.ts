/**
 * Downloads one envtest archive into our store: streamed to a temp file beside the store while its
 * sha512 is computed, checked against the index, every entry checked (only files, none outside the
 * archive: no `../`, no absolute path, no link of any kind), unpacked into a temp folder and renamed
 * into place, all under the store lock. Whatever fails, nothing is left in the store.
 *
 * Extraction uses node-tar (npm `tar`, the tar npm itself unpacks packages with) rather than the
 * system's tar, whose flags and refusal of unsafe paths differ between GNU, BSD and busybox.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { list as tarList, extract as tarExtract } from 'tar';
import type { Dispatcher } from 'undici';
import { omitUndefined } from '../../../core/omit-undefined.js';
import { EnvtestError } from './envtest-error.js';
import { checkedRequest, displayUrl } from './http.js';
import { progressBar, type ProgressStream } from './progress-bar.js';
import type { EnvtestArchive } from './release-index.js';
import { storeFolderName } from './platform.js';
import { hasControlPlane } from './store.js';
import { withStoreLock } from './store-lock.js';

/** Where upstream archives keep the binaries. */
const ARCHIVE_PREFIX = 'controller-tools/envtest/';
const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

export interface InstallArchiveOptions {
  readonly storeDir: string;
  readonly dispatcher: Dispatcher;
  /** Progress bar target (drawn only when it is a TTY). */
  readonly progress?: ProgressStream;
  readonly signal?: AbortSignal;
}

function failure(
  archive: EnvtestArchive,
  storeDir: string,
  reason: string,
  fix: string,
  cause?: unknown,
): EnvtestError {
  return new EnvtestError(
    `envtest download of ${archive.name} from ${displayUrl(archive.url)} failed: ${reason}. Expected sha512 ${archive.sha512}. ` +
      `Nothing was written to ${storeDir}. Fix: ${fix}`,
    cause === undefined ? undefined : { cause },
  );
}

const RETRY_FIX =
  'retry (operator-runtime testenv install); behind a proxy set HTTPS_PROXY; offline, point OPERATOR_RUNTIME_ENVTEST_INDEX (or --index) at a mirror, or set OPERATOR_RUNTIME_ASSETS to a folder with etcd and kube-apiserver';
const HTTPS_FIX =
  'the binaries are run once installed, so every hop of their download must be https (plain http on loopback only): use an index whose selfLinks, and the hosts they redirect to, are https';
const CORRUPT_FIX =
  'retry; if it persists, the archive does not match its index: check the mirror (OPERATOR_RUNTIME_ENVTEST_INDEX / --index) serves the archive its index names, ' +
  'or fetch the archive yourself, check it with sha512sum against the hash above, unpack it and set OPERATOR_RUNTIME_ASSETS to its controller-tools/envtest folder';

/** Installs `archive` into `<storeDir>/k8s/<version>-<os>-<arch>/` (unless already complete) and returns that folder. */
export async function installArchive(archive: EnvtestArchive, options: InstallArchiveOptions): Promise<string> {
  const { storeDir } = options;
  const target = join(storeDir, 'k8s', storeFolderName(archive.version, archive.platform));
  if (hasControlPlane(target)) return target;
  await mkdir(storeDir, { recursive: true });
  return withStoreLock(
    join(storeDir, '.lock'),
    async () => {
      // Another process may have installed it while this one waited.
      if (hasControlPlane(target)) return target;
      const tmp = await mkdtemp(join(storeDir, '.tmp-'));
      try {
        const file = join(tmp, archive.name);
        await download(archive, file, options);
        const unpacked = join(tmp, 'unpacked');
        await unpack(archive, file, unpacked, storeDir);
        await mkdir(join(storeDir, 'k8s'), { recursive: true });
        await rm(target, { recursive: true, force: true });
        await rename(unpacked, target);
        return target;
      } finally {
        await rm(tmp, { recursive: true, force: true });
      }
    },
    omitUndefined({ signal: options.signal }),
  );
}

async function download(archive: EnvtestArchive, file: string, options: InstallArchiveOptions): Promise<void> {
  const { storeDir } = options;
  let res: Dispatcher.ResponseData;
  try {
    res = await checkedRequest(new URL(archive.url), {
      dispatcher: options.dispatcher,
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
      refused: (reason) => failure(archive, storeDir, `refused: ${reason}`, HTTPS_FIX),
      ...omitUndefined({ signal: options.signal }),
    });
  } catch (error) {
    if (error instanceof EnvtestError) throw error;
    throw failure(archive, storeDir, `the request was refused (${(error as Error).message})`, RETRY_FIX, error);
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw failure(archive, storeDir, `the server answered ${res.statusCode}`, RETRY_FIX);
  }
  const lengthHeader = res.headers['content-length'];
  const total = typeof lengthHeader === 'string' ? Number(lengthHeader) : undefined;
  const hash = createHash('sha512');
  let received = 0;
  const bar = progressBar(options.progress, archive.name, total);
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      received += chunk.length;
      bar.update(received);
      callback(null, chunk);
    },
  });
  try {
    await pipeline(res.body, meter, createWriteStream(file));
  } catch (error) {
    throw failure(
      archive,
      storeDir,
      `the download broke off after ${received} bytes${total ? ` of ${total}` : ''} (${(error as Error).message})`,
      RETRY_FIX,
      error,
    );
  } finally {
    bar.done();
  }
  if (total !== undefined && received !== total) {
    throw failure(archive, storeDir, `the download was truncated: ${received} of ${total} bytes`, RETRY_FIX);
  }
  const actual = hash.digest('hex');
  if (actual !== archive.sha512) {
    throw failure(archive, storeDir, `checksum mismatch: got sha512 ${actual} (${received} bytes)`, CORRUPT_FIX);
  }
}

function unsafeReason(path: string, type: string): string | undefined {
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.startsWith('\\')) return 'an absolute path';
  if (path.split(/[\\/]/).includes('..')) return 'a path leaving the archive (..)';
  if (type === 'Link' || type === 'SymbolicLink') return 'a link';
  if (!FILE_TYPES.has(type) && type !== 'Directory') return `an entry of type ${type}`;
  return undefined;
}

async function unpack(archive: EnvtestArchive, file: string, dir: string, storeDir: string): Promise<void> {
  // A first pass refuses the whole archive on one bad entry, before anything is written.
  const refused: string[] = [];
  try {
    await tarList({
      file,
      strict: true,
      onReadEntry: (entry) => {
        const reason = unsafeReason(entry.path, entry.type);
        if (reason) refused.push(`${entry.path} (${reason}${entry.linkpath ? ` to ${entry.linkpath}` : ''})`);
        entry.resume();
      },
    });
  } catch (error) {
    throw failure(archive, storeDir, `it is not a readable .tar.gz (${(error as Error).message})`, CORRUPT_FIX, error);
  }
  if (refused.length > 0) {
    throw failure(
      archive,
      storeDir,
      `it has entries outside its folder, refused: ${refused.slice(0, 5).join(', ')}`,
      'use an archive built as controller-tools builds them (files only, under controller-tools/envtest/)',
    );
  }
  await mkdir(dir);
  try {
    await tarExtract({
      file,
      cwd: dir,
      strict: true,
      strip: ARCHIVE_PREFIX.split('/').length - 1,
      // Only the binaries, flat in the version folder (setup-envtest's layout).
      filter: (path, entry) =>
        path.startsWith(ARCHIVE_PREFIX) &&
        !path.slice(ARCHIVE_PREFIX.length).includes('/') &&
        'type' in entry &&
        FILE_TYPES.has(entry.type),
      noChmod: false,
    });
  } catch (error) {
    throw failure(archive, storeDir, `unpacking failed (${(error as Error).message})`, CORRUPT_FIX, error);
  }
  for (const name of await readdir(dir)) await chmod(join(dir, name), 0o755);
  if (!hasControlPlane(dir)) {
    const found = (await readdir(dir)).join(', ') || 'nothing';
    throw failure(
      archive,
      storeDir,
      `it holds no etcd and kube-apiserver under ${ARCHIVE_PREFIX} (found: ${found})`,
      CORRUPT_FIX,
    );
  }
}
