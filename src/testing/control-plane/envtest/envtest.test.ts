import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BinariesNotFoundError,
  ControllerManagerMissingError,
  controllerManagerMissing,
  resolveBinaries,
  sourceBuildScript,
  versionedApiServerFlags,
} from '../binaries.js';
import { TestEnv } from '../test-env.js';
import { cleanupEnvtest, installEnvtest, listEnvtest, useEnvtest } from './envtest.js';
import { EnvtestError } from './envtest-error.js';
import {
  fakeBinary,
  makeRawArchive,
  startLoopbackIndex,
  type LoopbackIndex,
} from '../test-support/loopback-envtest-index.js';
import { currentPlatform, storeFolderName } from './platform.js';
import { progressBar, renderProgress } from './progress-bar.js';
import { checkIndexUrl, parseReleaseIndex } from './release-index.js';
import { setupEnvtestStoreDir } from './store.js';
import { parseVersionSelector } from './version-selector.js';

const platform = currentPlatform();
const BINARIES = ['etcd', 'kube-apiserver', 'kubectl'].map(fakeBinary);

async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => !e.isDirectory())
    .map((e) => join(e.parentPath, e.name));
}

/** A user's environment: an empty HOME, no asset variables, an empty PATH. */
function emptyEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { HOME: home, PATH: '', ...extra };
}

describe('envtest version selectors, as setup-envtest reads them', () => {
  const cases: [string, string, boolean][] = [
    ['1.30.x', '1.30.4', true],
    ['1.30.x', '1.31.0', false],
    ['1.30', '1.30.0', true],
    ['v1.30.2', '1.30.2', true],
    ['1.30.2', '1.30.3', false],
    ['~1.30.2', '1.30.5', true],
    ['~1.30.2', '1.30.1', false],
    ['~1.30.2', '1.31.0', false],
    ['<1.31', '1.30.9', true],
    ['<1.31', '1.31.0', false],
    ['<=1.30', '1.30.9', true],
    ['<=1.30.4', '1.30.5', false],
    ['latest', '1.9.0', true],
  ];
  for (const [selector, version, expected] of cases) {
    test(`${selector} ${expected ? 'matches' : 'does not match'} ${version}`, () =>
      assert.equal(parseVersionSelector(selector).matches(version), expected));
  }
  test('a selector it cannot read is an error naming the forms it can', () => {
    assert.throws(
      () => parseVersionSelector('1.30.x.y'),
      (e: unknown) => e instanceof EnvtestError && /X\.Y\.x/.test(e.message),
    );
  });
});

describe('the envtest release index', () => {
  test("reads controller-tools' layout, newest first by number (1.10 after 1.9), skipping entries it cannot use", () => {
    const hash = 'a'.repeat(128);
    const text = `releases:
  v1.9.0:
    envtest-v1.9.0-linux-amd64.tar.gz: { hash: ${hash}, selfLink: https://example.test/9 }
  v1.10.1:
    envtest-v1.10.1-linux-amd64.tar.gz: { hash: ${hash.toUpperCase()}, selfLink: https://example.test/10 }
    envtest-v1.10.1-darwin-arm64.tar.gz: { hash: short, selfLink: https://example.test/bad }
  not-a-version: {}
`;
    const releases = parseReleaseIndex(text, 'https://example.test/index.yaml');
    assert.deepEqual(
      releases.map((r) => r.version),
      ['1.10.1', '1.9.0'],
    );
    assert.deepEqual(
      releases[0]!.archives.map((a) => [a.name, a.platform, a.sha512]),
      [['envtest-v1.10.1-linux-amd64.tar.gz', { os: 'linux', arch: 'amd64' }, hash]],
    );
  });

  test('is read over https, or plain http only on loopback: it carries the hashes', () => {
    assert.equal(checkIndexUrl('https://mirror.example/envtest-releases.yaml').protocol, 'https:');
    assert.equal(checkIndexUrl('http://127.0.0.1:8080/i.yaml').hostname, '127.0.0.1');
    assert.equal(checkIndexUrl('http://[::1]:8080/i.yaml').hostname, '[::1]');
    assert.throws(
      () => checkIndexUrl('http://mirror.example/i.yaml'),
      (e: unknown) => e instanceof EnvtestError && /must be https/.test(e.message),
    );
    assert.throws(() => checkIndexUrl('ftp://127.0.0.1/i.yaml'), EnvtestError);
  });
});

test("setup-envtest's store is its standard folder per OS (XDG_DATA_HOME on Linux, Application Support on macOS)", () => {
  assert.equal(setupEnvtestStoreDir({ HOME: '/h' }, 'linux'), '/h/.local/share/kubebuilder-envtest');
  assert.equal(setupEnvtestStoreDir({ HOME: '/h', XDG_DATA_HOME: '/x' }, 'linux'), '/x/kubebuilder-envtest');
  assert.equal(
    setupEnvtestStoreDir({ HOME: '/h', XDG_DATA_HOME: '/x' }, 'darwin'),
    '/h/Library/Application Support/io.kubebuilder.envtest',
  );
});

test('the progress bar draws on a TTY only, throttled', () => {
  assert.equal(renderProgress('a.tar.gz', 512 * 1024, 1024 * 1024, 10), 'a.tar.gz [#####-----]  50%  0.5/1.0 MiB');
  const written: string[] = [];
  let now = 0;
  const bar = progressBar({ isTTY: true, write: (t) => written.push(t) }, 'a', 100, {
    now: () => now,
    intervalMs: 100,
  });
  bar.update(10);
  bar.update(20);
  now = 100;
  bar.update(30);
  bar.done();
  assert.equal(written.length, 3);
  assert.match(written[2]!, /30%.*\n$/);
  const none: string[] = [];
  const quiet = progressBar({ isTTY: false, write: (t) => none.push(t) }, 'a', 100);
  quiet.update(50);
  quiet.done();
  assert.deepEqual(none, []);
});

describe('envtest downloads from a loopback index', () => {
  let dir: string;
  let server: LoopbackIndex;
  const archives: Record<string, Awaited<ReturnType<typeof makeRawArchive>>> = {};

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'envtest-unit-'));
    const out = join(dir, 'archives');
    await mkdir(out);
    const make = async (version: string, entries = BINARIES) =>
      (archives[version] = await makeRawArchive({ version, platform, entries, outDir: out }));
    await make('1.30.0');
    await make('1.31.2');
    await make('1.29.0', [
      { path: 'controller-tools/envtest/', type: 'Directory' },
      ...BINARIES,
      { path: '../escaped', type: 'File', body: 'x' },
    ]);
    await make('1.28.0', [...BINARIES, { path: '/tmp/envtest-absolute-escape', type: 'File', body: 'x' }]);
    await make('1.27.0', [
      ...BINARIES,
      { path: 'controller-tools/envtest/link', type: 'SymbolicLink', linkpath: '/etc/passwd' },
    ]);
    await make('1.26.0', [
      ...BINARIES,
      { path: 'controller-tools/envtest/hard', type: 'Link', linkpath: 'controller-tools/envtest/etcd' },
    ]);
    server = await startLoopbackIndex(Object.values(archives));
  });

  after(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const home = async () => mkdtemp(join(dir, 'home-'));
  const opts = (h: string, extra: Record<string, unknown> = {}) => ({
    env: emptyEnv(h),
    indexUrl: server.indexUrl,
    progress: { isTTY: false, write: () => true },
    ...extra,
  });

  test('install takes the newest by default, verifies it and unpacks etcd, kube-apiserver, kubectl flat into <cache>/envtest/k8s/<version>-<os>-<arch>', async () => {
    const h = await home();
    const installed = await installEnvtest(opts(h));
    assert.equal(installed.version, '1.31.2');
    assert.equal(installed.dir, join(h, '.cache/operator-runtime/envtest/k8s', storeFolderName('1.31.2', platform)));
    assert.deepEqual((await readdir(installed.dir)).sort(), ['etcd', 'kube-apiserver', 'kubectl']);
    // Nothing else left beside it: no temp folder, no lock.
    assert.deepEqual(await readdir(join(h, '.cache/operator-runtime/envtest')), ['k8s']);
    const again = server.requests.length;
    assert.equal((await installEnvtest(opts(h))).dir, installed.dir);
    assert.deepEqual(
      server.requests.slice(again),
      ['/envtest-releases.yaml'],
      'the second install reads the index only',
    );
  });

  test('a selector picks the newest match: 1.30.x', async () => {
    assert.equal((await installEnvtest(opts(await home(), { version: '1.30.x' }))).version, '1.30.0');
  });

  for (const fault of ['corrupt', 'truncate', 'refuse'] as const) {
    test(`a ${fault === 'corrupt' ? 'corrupted' : fault === 'truncate' ? 'truncated' : 'refused'} download leaves nothing in the cache and names the archive, the expected hash and the fix`, async (t) => {
      const h = await home();
      server.fault('1.30.0', fault);
      t.after(() => server.fault('1.30.0', undefined));
      const expected = createHash('sha512')
        .update(await import('node:fs/promises').then((fs) => fs.readFile(archives['1.30.0']!.file)))
        .digest('hex');
      await assert.rejects(installEnvtest(opts(h, { version: '1.30.0' })), (e: unknown) => {
        assert.ok(e instanceof EnvtestError, String(e));
        assert.equal(e.code, 'ERR_ENVTEST');
        assert.match(e.message, new RegExp(`envtest-v1\\.30\\.0-${platform.os}-${platform.arch}\\.tar\\.gz`));
        assert.ok(e.message.includes(`Expected sha512 ${expected}`), e.message);
        assert.match(e.message, /Nothing was written to .*Fix: /);
        assert.match(
          e.message,
          fault === 'corrupt' ? /checksum mismatch/ : fault === 'truncate' ? /truncated|broke off/ : /answered 403/,
        );
        return true;
      });
      assert.deepEqual(await filesUnder(join(h, '.cache')), []);
    });
  }

  test('an unknown version names the versions the index has, and downloads nothing', async () => {
    const h = await home();
    const before = server.requests.length;
    await assert.rejects(
      installEnvtest(opts(h, { version: '1.99.x' })),
      (e: unknown) =>
        e instanceof EnvtestError &&
        /no version matching 1\.99\.x/.test(e.message) &&
        /1\.31\.2/.test(e.message) &&
        /Fix: /.test(e.message),
    );
    assert.deepEqual(server.requests.slice(before), ['/envtest-releases.yaml']);
    assert.deepEqual(await filesUnder(join(h, '.cache')), []);
  });

  for (const [version, what] of [
    ['1.29.0', /\.\.\/escaped \(a path leaving/],
    ['1.28.0', /absolute-escape \(an absolute path/],
    ['1.27.0', /link \(a link to \/etc\/passwd/],
    ['1.26.0', /hard \(a link/],
  ] as const) {
    test(`an archive with an entry outside its folder is refused whole (${what.source.split(' ')[0]})`, async () => {
      const h = await home();
      await assert.rejects(
        installEnvtest(opts(h, { version })),
        (e: unknown) =>
          e instanceof EnvtestError && /entries outside its folder, refused/.test(e.message) && what.test(e.message),
      );
      assert.deepEqual(await filesUnder(join(h, '.cache')), []);
      assert.equal(existsSync(join(h, '.cache/operator-runtime/escaped')), false);
      assert.equal(existsSync('/tmp/envtest-absolute-escape'), false);
    });
  }

  test('two installs at once download once (the store lock) and agree on the folder', async () => {
    const h = await home();
    const before = server.requests.filter((r) => r.endsWith('.tar.gz')).length;
    const [a, b] = await Promise.all([
      installEnvtest(opts(h, { version: '1.30.0' })),
      installEnvtest(opts(h, { version: '1.30.0' })),
    ]);
    assert.equal(a.dir, b.dir);
    assert.equal(server.requests.filter((r) => r.endsWith('.tar.gz')).length - before, 1);
  });

  test('use finds what is installed without the index, downloads when nothing is, and installedOnly never downloads', async () => {
    const h = await home();
    await assert.rejects(
      useEnvtest(opts(h, { installedOnly: true })),
      (e: unknown) => e instanceof BinariesNotFoundError && /installedOnly/.test(e.message),
    );
    const first = await useEnvtest(opts(h));
    assert.equal(first.source, 'download');
    assert.equal(first.version, '1.31.2');
    const offline = await useEnvtest({ ...opts(h), indexUrl: 'http://127.0.0.1:1/nothing.yaml' });
    assert.deepEqual(offline, { dir: first.dir, source: 'envtest-cache', version: '1.31.2' });
    // TestEnv's own resolution finds the same folder.
    assert.equal(resolveBinaries(emptyEnv(h)).dir, first.dir);
  });

  test('list shows installed and available versions; cleanup removes ours only', async () => {
    const h = await home();
    await installEnvtest(opts(h, { version: '1.30.0' }));
    const setupEnvtest = join(h, '.local/share/kubebuilder-envtest/k8s', storeFolderName('1.25.0', platform));
    await mkdir(setupEnvtest, { recursive: true });
    for (const name of ['etcd', 'kube-apiserver'])
      await writeFile(join(setupEnvtest, name), '#!/bin/sh\n', { mode: 0o755 });
    const listing = await listEnvtest(opts(h));
    assert.deepEqual(
      listing.installed.map((i) => [i.version, i.store]),
      [
        ['1.25.0', 'setup-envtest'],
        ['1.30.0', 'operator-runtime'],
      ],
    );
    assert.ok(listing.available.some((a) => a.version === '1.31.2'));
    assert.deepEqual(await cleanupEnvtest({ env: emptyEnv(h) }), [
      join(h, '.cache/operator-runtime/envtest/k8s', storeFolderName('1.30.0', platform)),
    ]);
    assert.ok(existsSync(setupEnvtest), "setup-envtest's store is not ours to clean");
  });

  test('HTTP_PROXY is honoured: the download goes through the proxy', async (t) => {
    const seen: string[] = [];
    const proxy = createServer((req, res) => {
      seen.push(req.url ?? '');
      const target = new URL(req.url ?? '');
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    // undici tunnels through the proxy (CONNECT), as it does for https.
    proxy.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      seen.push(`CONNECT ${req.url ?? ''}`);
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host!, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    t.after(
      () =>
        new Promise<void>((resolve) => {
          proxy.close(() => resolve());
          proxy.closeAllConnections();
        }),
    );
    const h = await home();
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    await installEnvtest({ ...opts(h, { version: '1.30.0' }), env: emptyEnv(h, { HTTP_PROXY: proxyUrl }) });
    const port = new URL(server.indexUrl).port;
    assert.ok(
      seen.some((u) => u.endsWith('/envtest-releases.yaml') || u === `CONNECT 127.0.0.1:${port}`),
      seen.join(', '),
    );
  });
});

describe('resolving binaries for TestEnv', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'envtest-resolve-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  async function folder(name: string, binaries: readonly string[]): Promise<string> {
    const path = join(dir, name);
    await mkdir(path, { recursive: true });
    for (const b of binaries) await writeFile(join(path, b), '#!/bin/sh\n', { mode: 0o755 });
    return path;
  }

  test("looks in order: asset variables, then setup-envtest's store, then our cache, then the source build", async () => {
    const h = await mkdtemp(join(dir, 'home-'));
    const source = await folder(`${h.slice(dir.length + 1)}/.cache/operator-runtime/control-plane/v1.20.2/bin`, [
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
    ]);
    assert.equal(resolveBinaries(emptyEnv(h)).source, 'source-build');
    const ours = await folder(
      `${h.slice(dir.length + 1)}/.cache/operator-runtime/envtest/k8s/${storeFolderName('1.30.0', platform)}`,
      ['etcd', 'kube-apiserver', 'kubectl'],
    );
    assert.deepEqual([resolveBinaries(emptyEnv(h)).dir, resolveBinaries(emptyEnv(h)).source], [ours, 'envtest-cache']);
    const theirs = await folder(
      `${h.slice(dir.length + 1)}/.local/share/kubebuilder-envtest/k8s/${storeFolderName('1.29.0', platform)}`,
      ['etcd', 'kube-apiserver'],
    );
    assert.equal(resolveBinaries(emptyEnv(h)).dir, theirs);
    const kb = await folder('kb', ['etcd', 'kube-apiserver']);
    assert.equal(resolveBinaries(emptyEnv(h, { KUBEBUILDER_ASSETS: kb })).source, 'KUBEBUILDER_ASSETS');
    const or = await folder('or', ['etcd', 'kube-apiserver']);
    assert.equal(resolveBinaries(emptyEnv(h, { KUBEBUILDER_ASSETS: kb, OPERATOR_RUNTIME_ASSETS: or })).dir, or);
    // An envtest folder has no kube-controller-manager: asking for one picks the folder that has all three.
    assert.equal(resolveBinaries(emptyEnv(h)).kubeControllerManager, undefined);
    assert.equal(resolveBinaries(emptyEnv(h), { controllerManager: true }).dir, source);
  });

  test('not found: the message names every place in order, OPERATOR_RUNTIME_ASSETS, and a fix that is in the package', async () => {
    const h = await mkdtemp(join(dir, 'empty-home-'));
    assert.throws(
      () => resolveBinaries(emptyEnv(h)),
      (e: unknown) => {
        assert.ok(e instanceof BinariesNotFoundError);
        const m = e.message;
        assert.match(m, /^control-plane binaries not found: etcd, kube-apiserver/);
        const order = [
          '1. explicit options',
          '2. OPERATOR_RUNTIME_ASSETS (unset), KUBEBUILDER_ASSETS',
          "3. setup-envtest's store",
          "4. operator-runtime's cache",
          '5. PATH',
          '6. a download',
          '7. on Debian as root: the source build',
        ];
        const at = order.map((s) => m.indexOf(s));
        assert.ok(
          at.every((i, k) => i >= 0 && (k === 0 || i > at[k - 1]!)),
          `in order: ${m}`,
        );
        assert.match(m, /Fix: run `npx operator-runtime testenv use`/);
        assert.doesNotMatch(m, /Run scripts\/install-control-plane\.sh/);
        return true;
      },
    );
    assert.ok(existsSync(sourceBuildScript()), `${sourceBuildScript()} exists`);
  });

  test('controllerManager without the binary is a named error saying what is missing and why', () => {
    const error = controllerManagerMissing({
      etcd: '/x/etcd',
      kubeApiserver: '/x/kube-apiserver',
      etcdctl: undefined,
      kubeControllerManager: undefined,
      dir: '/x',
      source: 'envtest-cache',
    });
    assert.ok(error instanceof ControllerManagerMissingError);
    assert.equal(error.code, 'ERR_TEST_ENV_NO_CONTROLLER_MANAGER');
    assert.match(
      error.message,
      /needs kube-controller-manager, and the binaries in \/x \(from envtest-cache\) have none/,
    );
    assert.match(error.message, /garbage collection.*StatefulSet/);
    assert.match(error.message, /OPERATOR_RUNTIME_KUBE_CONTROLLER_MANAGER/);
    assert.match(
      controllerManagerMissing(
        { etcd: '', kubeApiserver: '', etcdctl: undefined, kubeControllerManager: undefined },
        'simulatePods',
      ).message,
      /^simulatePods needs kube-controller-manager.*pod simulator/,
    );
  });

  test('TestEnv.start asks for kube-controller-manager only when a feature needs it, with the named error', async () => {
    const envtestDir = await folder('envtest-like', ['etcd', 'kube-apiserver', 'kubectl']);
    const binaries = {
      etcd: join(envtestDir, 'etcd'),
      kubeApiserver: join(envtestDir, 'kube-apiserver'),
      etcdctl: undefined,
      kubeControllerManager: undefined,
      dir: envtestDir,
    };
    await assert.rejects(
      TestEnv.start({ binaries, controllerManager: true }),
      (e: unknown) =>
        e instanceof ControllerManagerMissingError &&
        e.message.startsWith('controllerManager: true needs kube-controller-manager'),
    );
    await assert.rejects(
      TestEnv.start({ binaries, simulatePods: true }),
      (e: unknown) =>
        e instanceof ControllerManagerMissingError &&
        e.message.startsWith('simulatePods needs kube-controller-manager'),
    );
  });

  test('kube-apiserver flags follow its version: --insecure-port=0 below 1.24 only (1.24 removed it)', async () => {
    const make = async (name: string, version: string) => {
      const path = join(await folder(name, []), 'kube-apiserver');
      await writeFile(path, `#!/bin/sh\necho "Kubernetes v${version}"\n`, { mode: 0o755 });
      return path;
    };
    assert.deepEqual(await versionedApiServerFlags(await make('k120', '1.20.2')), ['--insecure-port=0']);
    assert.deepEqual(await versionedApiServerFlags(await make('k130', '1.30.0')), []);
  });
});
