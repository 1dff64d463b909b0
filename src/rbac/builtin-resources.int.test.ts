import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { BUILTIN_RESOURCES } from './builtin-resources.js';

interface ApiResourceList {
  resources: { name: string; kind: string; namespaced: boolean }[];
}

let env: TestEnv;
/** `group/Kind` → what discovery says, over every version the server serves. */
const served = new Map<string, { resource: string; namespaced: boolean }[]>();

before(async () => {
  env = await TestEnv.start();
  const groups = await env.request<{ groups: { name: string; versions: { groupVersion: string }[] }[] }>(
    'GET',
    '/apis',
  );
  const groupVersions = ['v1', ...groups.body.groups.flatMap((g) => g.versions.map((v) => v.groupVersion))];
  for (const gv of groupVersions) {
    const res = await env.request<ApiResourceList>('GET', gv === 'v1' ? '/api/v1' : `/apis/${gv}`);
    assert.equal(res.status, 200, gv);
    const group = gv.includes('/') ? gv.slice(0, gv.indexOf('/')) : '';
    for (const r of res.body.resources) {
      if (r.name.includes('/')) continue; // subresources
      const key = `${group}/${r.kind}`;
      served.set(key, [...(served.get(key) ?? []), { resource: r.name, namespaced: r.namespaced }]);
    }
  }
});

after(async () => {
  await env?.stop();
});

test('every built-in resource in the table has the plural and scope kube-apiserver 1.20 serves it with', () => {
  const wrong: string[] = [];
  for (const [key, expected] of BUILTIN_RESOURCES) {
    const actual = served.get(key);
    if (!actual) wrong.push(`${key}: not served by 1.20 in any version`);
    else if (!actual.every((a) => a.resource === expected.resource && a.namespaced === expected.namespaced))
      wrong.push(`${key}: table ${JSON.stringify(expected)}, server ${JSON.stringify(actual)}`);
  }
  assert.deepEqual(wrong, []);
  assert.ok(BUILTIN_RESOURCES.size >= 40);
});
