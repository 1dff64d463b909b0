/**
 * A stand-in operator for exec-credential-lifetime.test.ts: asks an exec plugin for a credential
 * (the plugin never answers), then either waits to be killed (`wait`) or, once the plugin has
 * started, aborts cleanly and calls process.exit (`exit`).
 *
 *   node --import tsx exec-plugin-operator.ts <plugin> wait|exit      (PIDS_FILE: where the plugin writes its pids)
 */
import { existsSync } from 'node:fs';
import { ExecCredentialPlugin } from '../exec-credential.js';

const [pluginPath, mode] = process.argv.slice(2);
const cred = new ExecCredentialPlugin({
  command: pluginPath!,
  apiVersion: 'client.authentication.k8s.io/v1',
  interactiveMode: 'Never',
});
const abort = new AbortController();
cred.get(abort.signal).catch(() => {});
const timer = setInterval(() => {
  if (mode !== 'exit' || !existsSync(process.env.PIDS_FILE!)) return;
  clearInterval(timer);
  abort.abort();
  process.exit(0);
}, 20);
