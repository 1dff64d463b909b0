/**
 * Test support (under src/testing/control-plane/test-support: never built or shipped): envtest archives in controller-tools' layout (`controller-tools/envtest/<binary>`,
 * gzip tarball) and a loopback HTTP server serving them with an `envtest-releases.yaml` index, so
 * the download is tested end to end without the internet. Faults: a corrupted body (the index's
 * hash no longer matches), a truncated body, a refusal (403).
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { create as tarCreate, Header } from 'tar';
import { stringify as toYaml } from 'yaml';
import { omitUndefined } from '../../../core/omit-undefined.js';
import { archiveName, type EnvtestPlatform } from '../envtest/platform.js';

export interface FixtureArchive {
  readonly version: string;
  readonly platform: EnvtestPlatform;
  readonly file: string;
}

/** Packs `binaries` (name → path; symlinks followed) as an upstream archive in `outDir`. */
export async function makeEnvtestArchive(options: {
  readonly version: string;
  readonly platform: EnvtestPlatform;
  readonly binaries: Readonly<Record<string, string>>;
  readonly outDir: string;
}): Promise<FixtureArchive> {
  const stage = await mkdtemp(join(tmpdir(), 'envtest-stage-'));
  try {
    const dir = join(stage, 'controller-tools', 'envtest');
    await mkdir(dir, { recursive: true });
    for (const [name, path] of Object.entries(options.binaries)) await symlink(path, join(dir, name));
    const file = join(options.outDir, archiveName(options.version, options.platform));
    await tarCreate({ file, cwd: stage, gzip: { level: 1 }, follow: true, portable: true }, ['controller-tools']);
    return { version: options.version, platform: options.platform, file };
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

export interface RawEntry {
  readonly path: string;
  readonly type: 'File' | 'SymbolicLink' | 'Link' | 'Directory';
  readonly body?: string;
  readonly linkpath?: string;
  readonly mode?: number;
}

/** An archive with exactly these entries, names as given (parent-relative, absolute, links): for refusal tests. */
export async function makeRawArchive(options: {
  readonly version: string;
  readonly platform: EnvtestPlatform;
  readonly entries: readonly RawEntry[];
  readonly outDir: string;
}): Promise<FixtureArchive> {
  const blocks: Buffer[] = [];
  for (const entry of options.entries) {
    const body = Buffer.from(entry.body ?? '');
    const header = new Header({
      path: entry.path,
      type: entry.type,
      size: entry.type === 'File' ? body.length : 0,
      mode: entry.mode ?? (entry.type === 'Directory' ? 0o755 : 0o755),
      mtime: new Date(0),
      ...omitUndefined({ linkpath: entry.linkpath || undefined }),
    });
    const block = Buffer.alloc(512);
    header.encode(block);
    blocks.push(block);
    if (entry.type === 'File') {
      blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  const file = join(options.outDir, archiveName(options.version, options.platform));
  await writeFile(file, gzipSync(Buffer.concat(blocks)));
  return { version: options.version, platform: options.platform, file };
}

/** A fake binary: a shell script that prints its name. */
export const fakeBinary = (name: string): RawEntry => ({
  path: `controller-tools/envtest/${name}`,
  type: 'File',
  body: `#!/bin/sh\necho ${name}\n`,
  mode: 0o755,
});

export type ArchiveFault = 'corrupt' | 'truncate' | 'refuse';

export interface LoopbackIndex {
  /** `http://127.0.0.1:<port>/envtest-releases.yaml` */
  readonly indexUrl: string;
  /** Requests served, by path. */
  readonly requests: string[];
  /** Make the archive of `version` fail this way from now on (undefined: serve it as it is). */
  fault(version: string, fault: ArchiveFault | undefined): void;
  close(): Promise<void>;
}

/** Serves an index naming each archive's sha512 and URL, and the archives, on 127.0.0.1. */
export async function startLoopbackIndex(archives: readonly FixtureArchive[]): Promise<LoopbackIndex> {
  const bodies = new Map<string, { archive: FixtureArchive; bytes: Buffer }>();
  for (const archive of archives)
    bodies.set(archiveName(archive.version, archive.platform), { archive, bytes: await readFile(archive.file) });
  const faults = new Map<string, ArchiveFault>();
  const requests: string[] = [];
  let index = '';
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(path);
    if (path === '/envtest-releases.yaml') {
      res.writeHead(200, { 'content-type': 'application/yaml' }).end(index);
      return;
    }
    const name = path.replace(/^\/download\/[^/]+\//, '');
    const served = bodies.get(name);
    if (!served) {
      res.writeHead(404).end('not found');
      return;
    }
    const fault = faults.get(served.archive.version);
    if (fault === 'refuse') {
      res.writeHead(403).end('forbidden');
      return;
    }
    const bytes = served.bytes;
    if (fault === 'truncate') {
      res.writeHead(200, { 'content-length': bytes.length });
      res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy());
      return;
    }
    const body =
      fault === 'corrupt' ? Buffer.concat([bytes.subarray(0, bytes.length - 100), Buffer.alloc(100, 0x2a)]) : bytes;
    res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/gzip' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const releases: Record<string, Record<string, { hash: string; selfLink: string }>> = {};
  for (const [name, { archive, bytes }] of bodies) {
    (releases[`v${archive.version}`] ??= {})[name] = {
      hash: createHash('sha512').update(bytes).digest('hex'),
      selfLink: `${base}/download/envtest-v${archive.version}/${name}`,
    };
  }
  index = toYaml({ releases });
  return {
    indexUrl: `${base}/envtest-releases.yaml`,
    requests,
    fault: (version, fault) => (fault ? faults.set(version, fault) : faults.delete(version)),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
