#!/usr/bin/env node
/**
 * The `operator-runtime` executable (package.json `bin`). Everything it does is in program.ts.
 */
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  progress: process.stderr,
});
