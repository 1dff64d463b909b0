/**
 * The reference operator's Dockerfile and Deployment say what runtime-image.int.test.ts proves: an
 * exact Node 24 base (the version the test command runs), the runtime laid out by the same script,
 * uid 65532, compiled JS, a versioned image with a read-only root filesystem.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';

const read = (path: string) => readFile(new URL(`../${path}`, import.meta.url), 'utf8');

test('the Dockerfile builds on the exact Node 24 version the tests run, and runs compiled JS as uid 65532 from the layout script', async () => {
  const dockerfile = await read('examples/database-operator/config/Dockerfile');
  const installer = await read('scripts/install-node24.sh');
  const tested = /NODE24_VERSION:-(24\.\d+\.\d+)\}/.exec(installer)?.[1];
  assert.ok(tested, 'install-node24.sh names an exact version');
  assert.match(dockerfile, new RegExp(`^ARG NODE_IMAGE=node:${tested.replaceAll('.', '\\.')}-bookworm-slim$`, 'm'));
  const stages = dockerfile.split(/^FROM /m).slice(1);
  assert.equal(stages.length, 2, 'a build stage and a runtime stage');
  assert.match(stages[0]!, /scripts\/layout-runtime\.sh \/runtime/);
  const runtime = stages[1]!;
  assert.match(runtime, /^\$\{NODE_IMAGE\}\n/);
  assert.deepEqual(
    runtime.match(/^COPY .*/gm),
    ['COPY --from=build /runtime /app'],
    'the runtime stage holds only the laid-out files',
  );
  assert.doesNotMatch(runtime, /^RUN /m, 'nothing runs (or writes) while the runtime stage is assembled');
  assert.match(runtime, /^USER 65532:65532$/m);
  assert.match(runtime, /^ENTRYPOINT \["node", "dist\/main\.js"\]$/m);
  assert.doesNotMatch(dockerfile, /tsx/);
});

test('the Deployment runs a versioned image, never :latest, on a read-only root filesystem', async () => {
  const docs = parseAllDocuments(await read('examples/database-operator/config/deployment.yaml')).map(
    (d) =>
      d.toJS() as {
        kind?: string;
        spec?: {
          template?: {
            spec?: { containers?: { image?: string; securityContext?: { readOnlyRootFilesystem?: boolean } }[] };
          };
        };
      },
  );
  const containers = docs
    .filter((d) => d.kind === 'Deployment')
    .flatMap((d) => d.spec?.template?.spec?.containers ?? []);
  assert.ok(containers.length > 0);
  const version = (JSON.parse(await read('package.json')) as { version: string }).version;
  for (const c of containers) {
    assert.equal(c.image, `example.com/database-operator:${version}`);
    assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
  }
});
