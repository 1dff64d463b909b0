/**
 * A stand-in API server for one namespaced kind (example.com/v1 Widget) that does almost no work:
 * discovery, list, watch (MODIFIED events on every status write, as the real one sends), and
 * merge-patch of `/status`. It lets bench/controller-e2e-cpu.bench.ts measure the CPU *our*
 * process spends per reconcile without the real API server and etcd competing for the same cores.
 * HTTPS with a bearer token, as TestEnv's server. Run as a child process: prints `{port}` on stdout.
 *
 *   node --import tsx bench/e2e/fake-widget-apiserver.ts <certFile> <keyFile> <token> <objects>
 */
import { createServer } from 'node:https';
import type { ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';

const [certFile, keyFile, token, count] = process.argv.slice(2);
const objects = Number(count ?? 2000);
let rv = 1000;
const uid = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
// Shaped as a 1.20 server answers for a CR (managedFields included), so the bytes per event are realistic.
const widgets = new Map<string, Record<string, unknown>>();
for (let i = 0; i < objects; i++) {
  const name = `w-${i}`;
  widgets.set(name, {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: {
      name,
      namespace: 'default',
      uid: uid(i),
      resourceVersion: String(++rv),
      generation: 1,
      creationTimestamp: '2026-12-02T05:00:00Z',
      managedFields: [
        {
          apiVersion: 'example.com/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { '.': {}, 'f:size': {} } },
          manager: 'undici',
          operation: 'Update',
          time: '2026-12-02T05:00:00Z',
        },
      ],
    },
    spec: { size: 1 + (i % 10) },
  });
}
const watchers = new Set<ServerResponse>();
/** Requests served, by method and path shape: printed on stderr at exit (SIGTERM), to see what a run asked. */
const requests = new Map<string, number>();
const DISCOVERY = JSON.stringify({
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'example.com/v1',
  resources: [
    {
      name: 'widgets',
      singularName: 'widget',
      namespaced: true,
      kind: 'Widget',
      verbs: ['get', 'list', 'watch', 'patch'],
    },
    { name: 'widgets/status', singularName: '', namespaced: true, kind: 'Widget', verbs: ['get', 'patch', 'update'] },
  ],
});
const COLLECTION = /^\/apis\/example\.com\/v1(?:\/namespaces\/default)?\/widgets$/;
const STATUS = /^\/apis\/example\.com\/v1\/namespaces\/default\/widgets\/([^/]+)\/status$/;

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer({ cert: readFileSync(certFile!), key: readFileSync(keyFile!) }, (req, res) => {
  if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, '{"kind":"Status","code":401}');
  const url = new URL(req.url ?? '/', 'https://x');
  const what = `${req.method} ${url.pathname.replace(/w-\d+/, '*')}${url.searchParams.has('watch') ? ' (watch)' : ''}`;
  requests.set(what, (requests.get(what) ?? 0) + 1);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (url.pathname === '/apis/example.com/v1') return send(res, 200, DISCOVERY);
    if (COLLECTION.test(url.pathname) && req.method === 'GET') {
      if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
        // As a 1.20 server: resourceVersionMatch is forbidden on a watch (so no watch-list).
        if (url.searchParams.has('resourceVersionMatch'))
          return send(res, 422, '{"kind":"Status","code":422,"reason":"Invalid"}');
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        watchers.add(res);
        res.on('close', () => watchers.delete(res));
        return;
      }
      return send(
        res,
        200,
        JSON.stringify({
          apiVersion: 'example.com/v1',
          kind: 'WidgetList',
          metadata: { resourceVersion: String(rv) },
          items: [...widgets.values()],
        }),
      );
    }
    const m = STATUS.exec(url.pathname);
    if (m && req.method === 'PATCH') {
      const w = widgets.get(decodeURIComponent(m[1]!));
      if (!w) return send(res, 404, '{"kind":"Status","code":404,"reason":"NotFound"}');
      const patch = JSON.parse(Buffer.concat(chunks).toString()) as { status?: Record<string, unknown> };
      const before = JSON.stringify(w.status);
      w.status = { ...(w.status as object | undefined), ...patch.status };
      // A patch that changes nothing is not written (no new resourceVersion, no event), as the real server.
      if (JSON.stringify(w.status) !== before) {
        (w.metadata as Record<string, unknown>).resourceVersion = String(++rv);
        const line = `{"type":"MODIFIED","object":${JSON.stringify(w)}}\n`;
        for (const watcher of watchers) watcher.write(line);
      }
      return send(res, 200, JSON.stringify(w));
    }
    send(res, 404, '{"kind":"Status","code":404,"reason":"NotFound"}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 }));
});
process.on('SIGTERM', () => {
  if (process.env.FAKE_APISERVER_COUNTS) console.error(JSON.stringify(Object.fromEntries(requests)));
  process.exit(0);
});
