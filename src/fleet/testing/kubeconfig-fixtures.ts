/** Kubeconfig fixtures for the providers' tests. */

/** The token of {@link tokenKubeconfig}: tests check it never shows up in a message or log line. */
export const TOKEN = 'secret-token-xyz';

/** A kubeconfig with a static token; port 1 on loopback refuses connections. */
export function tokenKubeconfig(server = 'https://127.0.0.1:1', token = TOKEN): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: ctx',
    'clusters:',
    '- name: c',
    '  cluster:',
    `    server: ${server}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: u',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: ctx',
    '  context: { cluster: c, user: u }',
    '',
  ].join('\n');
}
