import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { fakeBinary, makeRawArchive } from '../test-support/loopback-envtest-index.js';
import { installEnvtest } from './envtest.js';
import { EnvtestError } from './envtest-error.js';
import { archiveName, currentPlatform } from './platform.js';

const platform = currentPlatform();
const BINARIES = ['etcd', 'kube-apiserver', 'kubectl'].map(fakeBinary);
/** Where the refused redirects point: plain http, not loopback, with credentials that must not reach a message. */
const AWAY = 'http://user:hunter2@example.invalid';
const SECRET = /hunter2|sekrit/;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

describe('envtest downloads hold every redirect to https (plain http on loopback only)', () => {
  let dir: string;
  let base: string;
  let server: Server;
  let proxy: Server;
  let proxyUrl: string;
  /** What reached the proxy: every request for a host that is not loopback goes there, so a refused host must never show. */
  const proxied: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'envtest-redirects-'));
    const out = join(dir, 'archives');
    await mkdir(out);
    const files = new Map<string, Buffer>();
    const releases: Record<string, Record<string, { hash: string; selfLink: string }>> = {};
    // Each version's archive is reached a different way (its selfLink): base is filled in below.
    const routes: Record<string, (name: string) => string> = {
      '1.30.0': (name) => `/hop/1/${name}`, // two loopback redirects, then the archive
      '1.31.0': (name) => `/away/${name}`, // a redirect to plain http off loopback
      '1.29.0': (name) => `${AWAY}/download/${name}?token=sekrit`, // the selfLink itself is plain http off loopback
      '1.28.0': (name) => `/loop/0/${name}`, // redirects without end
    };
    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const hop = /^\/hop\/(\d)\/(.+)$/.exec(path);
      const loop = /^\/loop\/(\d+)\/(.+)$/.exec(path);
      if (path === '/envtest-releases.yaml') res.writeHead(200).end(toYaml({ releases }));
      else if (path === '/index-hop.yaml') res.writeHead(307, { location: '/envtest-releases.yaml' }).end();
      else if (path === '/index-away.yaml')
        res.writeHead(302, { location: `${AWAY}/envtest-releases.yaml?token=sekrit` }).end();
      else if (hop) res.writeHead(302, { location: hop[1] === '1' ? `/hop/2/${hop[2]}` : `/files/${hop[2]}` }).end();
      else if (path.startsWith('/away/'))
        res.writeHead(301, { location: `${AWAY}/files/${path.slice('/away/'.length)}?token=sekrit` }).end();
      else if (loop) res.writeHead(302, { location: `/loop/${Number(loop[1]) + 1}/${loop[2]}` }).end();
      else if (path.startsWith('/files/') && files.has(path.slice('/files/'.length)))
        res.writeHead(200).end(files.get(path.slice('/files/'.length)));
      else res.writeHead(404).end();
    });
    base = await listen(server);
    for (const [version, route] of Object.entries(routes)) {
      const archive = await makeRawArchive({ version, platform, entries: BINARIES, outDir: out });
      const bytes = await readFile(archive.file);
      const name = archiveName(version, platform);
      files.set(name, bytes);
      releases[`v${version}`] = {
        [name]: { hash: createHash('sha512').update(bytes).digest('hex'), selfLink: new URL(route(name), base).href },
      };
    }
    // Answers nothing: it only records what was sent its way (undici tunnels with CONNECT).
    proxy = createServer((req, res) => {
      proxied.push(`${req.method} ${req.url}`);
      res.writeHead(502).end();
    });
    proxy.on('connect', (req, socket: Socket) => {
      proxied.push(`CONNECT ${req.url}`);
      socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    proxyUrl = await listen(proxy);
  });

  after(async () => {
    if (server) await close(server);
    if (proxy) await close(proxy);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const home = () => mkdtemp(join(dir, 'home-'));
  const install = (h: string, indexPath: string, version: string) =>
    installEnvtest({
      indexUrl: `${base}${indexPath}`,
      version,
      env: { HOME: h, PATH: '', HTTP_PROXY: proxyUrl, NO_PROXY: '127.0.0.1' },
      progress: { isTTY: false, write: () => true },
    });
  /** Files (not folders) under the cache: what a failed download must not leave. */
  const storeFiles = async (h: string) =>
    existsSync(join(h, '.cache'))
      ? (await readdir(join(h, '.cache'), { recursive: true, withFileTypes: true }))
          .filter((e) => !e.isDirectory())
          .map((e) => join(e.parentPath, e.name))
      : [];

  test('an index redirected to plain http off loopback is refused before anything connects to that host', async () => {
    // Regression: undici's redirect interceptor followed it, and that host supplied the checksums.
    const h = await home();
    const before = proxied.length;
    await assert.rejects(install(h, '/index-away.yaml', '1.30.0'), (e: unknown) => {
      assert.ok(e instanceof EnvtestError, String(e));
      assert.match(
        e.message,
        /the envtest index was refused: .*redirected to http:\/\/example\.invalid\/envtest-releases\.yaml/,
      );
      assert.match(e.message, /https only, plain http on loopback only/);
      assert.doesNotMatch(e.message, SECRET, 'no query string or userinfo in the message');
      return true;
    });
    assert.deepEqual(proxied.slice(before), [], 'the refused host was never asked, not even through the proxy');
    assert.deepEqual(await storeFiles(h), []);
  });

  test('an archive redirected to plain http off loopback is refused before anything connects to that host', async () => {
    const h = await home();
    const before = proxied.length;
    await assert.rejects(install(h, '/envtest-releases.yaml', '1.31.0'), (e: unknown) => {
      assert.ok(e instanceof EnvtestError, String(e));
      assert.match(e.message, /envtest download of envtest-v1\.31\.0-.* failed: refused: /);
      assert.match(e.message, /redirected to http:\/\/example\.invalid\/files\/envtest-v1\.31\.0/);
      assert.doesNotMatch(e.message, SECRET);
      return true;
    });
    assert.deepEqual(proxied.slice(before), []);
    assert.deepEqual(await storeFiles(h), [], 'nothing installed');
  });

  test("an archive whose own selfLink is plain http off loopback is refused (the index's hash does not make the host trusted)", async () => {
    const h = await home();
    const before = proxied.length;
    await assert.rejects(
      install(h, '/envtest-releases.yaml', '1.29.0'),
      (e: unknown) =>
        e instanceof EnvtestError &&
        /refused: http:\/\/example\.invalid\/download\/envtest-v1\.29\.0-\S+ is not allowed/.test(e.message) &&
        !SECRET.test(e.message),
    );
    assert.deepEqual(proxied.slice(before), []);
  });

  test('redirects on loopback are followed, for the index and the archive', async () => {
    const h = await home();
    const installed = await install(h, '/index-hop.yaml', '1.30.0');
    assert.equal(installed.version, '1.30.0');
    assert.deepEqual((await readdir(installed.dir)).sort(), ['etcd', 'kube-apiserver', 'kubectl']);
  });

  test('redirects end after 5, with an EnvtestError', async () => {
    const h = await home();
    await assert.rejects(
      install(h, '/envtest-releases.yaml', '1.28.0'),
      (e: unknown) => e instanceof EnvtestError && /more than 5 redirects/.test(e.message),
    );
    assert.deepEqual(await storeFiles(h), []);
  });
});
