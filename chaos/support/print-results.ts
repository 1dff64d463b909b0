/** Run by scripts/chaos.sh after the scenarios: merges their rows into one JSON file and prints the table. */
import { RESULTS_FILE, formatChaosTable, mergeChaosResults } from './chaos-results.js';

const results = await mergeChaosResults();
console.log(`\n${formatChaosTable(results)}\n`);
console.log(`${results.length} scenario(s); JSON in ${RESULTS_FILE}`);
if (results.length === 0) process.exitCode = 1;
