/**
 * Writes the rule file, the PrometheusRule manifest and the Grafana dashboard from
 * `rules-source.ts`. Run after editing the source; `monitoring.test.ts` fails until you do.
 *
 *   node --import tsx monitoring/generate.ts
 */
import { writeFile } from 'node:fs/promises';
import { ARTEFACTS } from './artefacts.js';

for (const a of ARTEFACTS) {
  const url = new URL(a.file, import.meta.url);
  await writeFile(url, a.render());
  console.log(`wrote monitoring/${a.file}`);
}
