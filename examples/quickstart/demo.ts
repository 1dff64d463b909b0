/**
 * Quickstart demo: starts a real local control plane (etcd + kube-apiserver +
 * kube-controller-manager), applies a sample CRD and custom resource with kubectl, prints them,
 * and stops everything. Run it from the repository root with
 * `node --conditions=operator-runtime-source --import tsx examples/quickstart/demo.ts`
 * (`npm run demo` is the reference operator's demo). TestEnv finds the control plane as
 * docs/testing.md says: the folder in OPERATOR_RUNTIME_ASSETS, or the build scripts/demo.sh caches.
 */
import { fileURLToPath } from 'node:url';
import { TestEnv, kubectl, readManifests } from 'operator-runtime/testing';

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

const started = performance.now();
const env = await TestEnv.start({ crds: await readManifests(here('./widget-crd.yaml')), controllerManager: true });
const stopOnSignal = (): void => void env.stop().then(() => process.exit(130));
process.once('SIGINT', stopOnSignal);
process.once('SIGTERM', stopOnSignal);
try {
  console.log(`control plane ready in ${((performance.now() - started) / 1000).toFixed(1)} s at ${env.server}`);
  console.log(`kubeconfig: ${env.kubeconfigPath}\n`);
  console.log(await kubectl(env.kubeconfigPath, ['apply', '-f', here('./widget.yaml')]));
  console.log(await kubectl(env.kubeconfigPath, ['get', 'crd', 'widgets.example.com']));
  console.log(await kubectl(env.kubeconfigPath, ['get', 'widgets', '-o', 'wide']));
  console.log(await kubectl(env.kubeconfigPath, ['get', 'widget', 'first-widget', '-o', 'yaml']));
  // The schema is enforced by the real API server:
  try {
    await kubectl(env.kubeconfigPath, [
      'patch',
      'widget',
      'first-widget',
      '--type=merge',
      '-p',
      '{"spec":{"size":42}}',
    ]);
  } catch (err) {
    console.log(`rejected as expected: ${(err as Error).message.split('\n').pop()}`);
  }
} finally {
  await env.stop();
  console.log('\ncontrol plane stopped');
}
