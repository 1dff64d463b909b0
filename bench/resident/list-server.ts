/**
 * A loopback stand-in for an API server's list and watch of N Database-like objects, in a process
 * of its own so its memory is not the measured process's. It answers as kube-apiserver with its
 * watch cache does: a list with `resourceVersion=0` is served whole (the watch cache ignores
 * `limit`), a list without one is a paged quorum read (`limit`, `continue`); a watch stays open and
 * silent, and a watch-list (`sendInitialEvents`) is refused as 1.20 refuses it. Bodies are written in 64 KiB pieces, as the API server streams a large list.
 *
 *   node --import tsx bench/resident/list-server.ts <objects>   prints the port, then serves
 */
import { createServer, type ServerResponse } from 'node:http';
import { databaseLike, DATABASE_LIKE } from '../../src/cache/testing/database-like.js';

const objects = Number(process.argv[2] ?? 10_000);
const RESOURCE_VERSION = '200000';
const itemJson: string[] = [];
for (let i = 0; i < objects; i++) itemJson.push(JSON.stringify(databaseLike(i)));

function listBody(offset: number, end: number): Buffer {
  const meta = { resourceVersion: RESOURCE_VERSION, ...(end < objects ? { continue: String(end) } : {}) };
  const head = `{"apiVersion":"${DATABASE_LIKE.apiVersion}","kind":"DatabaseList","metadata":${JSON.stringify(meta)},"items":[`;
  return Buffer.from(head + itemJson.slice(offset, end).join(',') + ']}');
}
const whole = listBody(0, objects);

function send(res: ServerResponse, body: Buffer): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  let at = 0;
  const next = (): void => {
    while (at < body.length) {
      const piece = body.subarray(at, at + 65_536);
      at += piece.length;
      if (!res.write(piece)) return void res.once('drain', next);
    }
    res.end();
  };
  next();
}

const server = createServer((req, res) => {
  if (process.env.LIST_SERVER_LOG) process.stderr.write(`${req.method} ${req.url}\n`);
  const url = new URL(req.url ?? '/', 'http://x');
  const q = url.searchParams;
  if (url.pathname === '/apis/example.com/v1') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(
      JSON.stringify({
        kind: 'APIResourceList',
        groupVersion: 'example.com/v1',
        resources: [{ name: 'databases', namespaced: true, kind: 'Database', verbs: ['list', 'watch'] }],
      }),
    );
  }
  if (q.has('sendInitialEvents')) {
    // As kube-apiserver 1.20 answers a watch-list: resourceVersionMatch without a resourceVersion.
    res.writeHead(422, { 'content-type': 'application/json' });
    return void res.end(
      JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422 }),
    );
  }
  if (q.get('watch') === 'true' || q.get('watch') === '1') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    req.on('close', () => res.end());
    return;
  }
  if (q.get('resourceVersion') === '0') return send(res, whole);
  const offset = Number(q.get('continue') ?? 0);
  const limit = Number(q.get('limit') ?? 0) || objects;
  send(res, listBody(offset, Math.min(objects, offset + limit)));
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
