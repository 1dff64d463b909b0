/**
 * Warm TestEnv start time: median of N starts (binaries already built), with and without
 * kube-controller-manager. Run: node --import tsx bench/test-env-start.bench.ts [runs]
 */
import { TestEnv } from '../src/testing/control-plane/test-env.js';

const runs = Number(process.argv[2] ?? 5);

async function measure(controllerManager: boolean): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const env = await TestEnv.start({ controllerManager });
    times.push(performance.now() - t0);
    await env.stop();
  }
  return times;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const kcm of [false, true]) {
  const times = await measure(kcm);
  console.log(
    `TestEnv.start (controllerManager: ${kcm}): median ${(median(times) / 1000).toFixed(2)} s over ${runs} runs [${times.map((t) => (t / 1000).toFixed(2)).join(', ')}]`,
  );
}
