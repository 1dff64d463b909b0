/**
 * The project files of a scaffolded operator: package.json (depending on this operator-runtime's
 * version; its own dependency ranges for prom-client, the TypeScript tooling and the SBOM library), the
 * TypeScript configs, a two-stage Dockerfile running compiled JS as uid 65532, a README and a
 * sample object (`samples.yaml` in the project's config folder, also the OLM bundle's alm-examples).
 */
import type { FileToWrite } from '../write-files.js';
import { runtimePackage, runtimeRange } from '../runtime-package.js';
import type { ScaffoldNames } from './scaffold-names.js';

/** Node 24 LTS, the version the runtime's tests run (scripts/install-node24.sh); pin its digest when you build. */
export const SCAFFOLD_NODE_IMAGE = 'node:24.22.3-bookworm-slim';

const range = (dependency: string, fallback: string) => runtimeRange(dependency) ?? fallback;
/** The lint peers at the versions the runtime is tested with (its peer ranges are wider). */
const lintRange = (dependency: string, fallback: string) =>
  runtimePackage().devDependencies?.[dependency] ?? range(dependency, fallback);

export function packageJson(n: ScaffoldNames): string {
  const runtime = runtimePackage();
  const manifest = {
    name: n.name,
    version: '0.1.0',
    private: true,
    type: 'module',
    engines: { node: runtime.engines?.node ?? '>=20' },
    scripts: {
      build: 'tsc -p tsconfig.build.json',
      start: 'node dist/main.js',
      typecheck: 'tsc --noEmit',
      // TestEnv's etcd and kube-apiserver: found on the machine, else downloaded and verified once.
      pretest: 'operator-runtime testenv use',
      test: 'node --import tsx --test src/*.test.ts',
      generate: 'operator-runtime generate manifests',
      // The OLM bundle (the bundle folder): its version is this file's, its alm-examples the sample object.
      bundle: 'operator-runtime generate bundle && operator-runtime validate bundle bundle',
      // CycloneDX SBOM of the production dependencies (docs/supply-chain.md in operator-runtime).
      sbom: 'operator-runtime sbom',
      // The reconciler rules (operator-runtime/eslint) over src/ and the conventions over the kinds.
      lint: 'operator-runtime lint',
    },
    dependencies: {
      [runtime.name]: `^${runtime.version}`,
      'prom-client': range('prom-client', '^15.1.3'),
    },
    devDependencies: {
      '@cyclonedx/cyclonedx-library': range('@cyclonedx/cyclonedx-library', '^10.3.0'),
      '@types/node': range('@types/node', '^20.19.0'),
      // operator-runtime lint's ESLint; @typescript-eslint/utils is released with typescript-eslint.
      '@typescript-eslint/utils': lintRange('typescript-eslint', '^8.0.0'),
      eslint: lintRange('eslint', '^10.0.0'),
      tsx: range('tsx', '^4.19.0'),
      'typescript-eslint': lintRange('typescript-eslint', '^8.0.0'),
      typescript: range('typescript', '~6.0.3'),
    },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2023",
    "lib": ["ES2023"],
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "types": ["node"],
    "strict": true,
    "noUncheckedIndexedAccess": true,
    "verbatimModuleSyntax": true,
    "skipLibCheck": true,
    "noEmit": true
  },
  "include": ["src", "operator-runtime.config.ts"]
}
`;

const TSCONFIG_BUILD = `{
  // npm run build: the operator as compiled JS in dist/ (tests and the generator config stay out).
  "extends": "./tsconfig.json",
  "compilerOptions": { "noEmit": false, "rootDir": "src", "outDir": "dist", "sourceMap": true },
  "include": ["src"],
  "exclude": ["src/**/*.test.ts"]
}
`;

export function dockerfile(n: ScaffoldNames): string {
  return `# The ${n.name} image: docker build -t example.com/${n.name}:0.1.0 .
# The build stage compiles; the runtime stage holds only dist/ and production dependencies, runs as
# uid 65532 and writes nothing, so the Deployment's readOnlyRootFilesystem needs no volume.
# Exact Node 24 LTS tag; for reproducible builds pin its digest too (docker buildx imagetools inspect).
ARG NODE_IMAGE=${SCAFFOLD_NODE_IMAGE}

FROM \${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
# The build type-checks: a broken operator never becomes an image.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM \${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only to the process: it only reads its code.
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["node", "dist/main.js"]
`;
}

export function readme(n: ScaffoldNames): string {
  return `# ${n.name}

A Kubernetes operator for the \`${n.kind}\` kind (\`${n.group}/v1\`), built on operator-runtime.
For each ${n.kind} it keeps a ConfigMap \`<name>-message\` with the ${n.kind}'s message, and
records the ConfigMap in the ${n.kind}'s status.

| File | What it is |
| --- | --- |
| \`src/${n.file}.ts\` | the ${n.kind} schema (TypeBox): its type and its CRD |
| \`src/${n.file}-reconciler.ts\` | the controller: \`.for(${n.constant})\`, reads with \`ctx.get()\`, declares its writes |
| \`src/operator.ts\`, \`src/main.ts\` | the Manager, and the process that runs it |
| \`src/operator.int.test.ts\` | an integration test against a real API server (TestEnv) |
| \`src/operator.simulation.test.ts\` | the operator under seeded crashes, stale caches, lost events and API errors, on the fake client and clock (\`simulate()\`; \`SIM_SEED=<n>\` replays a failing seed) |
| \`operator-runtime.config.ts\` | what \`npm run generate\` reads |
| \`config/\` | the generated Kustomize base: CRD, RBAC, Namespace, ServiceAccount, Deployment, metrics Service, NetworkPolicy |
| \`config/samples.yaml\` | a sample ${n.kind} (hand-written; also the OLM bundle's \`alm-examples\`) |
| \`bundle/\` | the generated OLM registry+v1 bundle (\`npm run bundle\`): ClusterServiceVersion, CRD, \`metadata/annotations.yaml\` |
| \`Dockerfile\` | the image: compiled JS, production dependencies, uid 65532, read-only |

## Commands

\`\`\`sh
npm install
npm test                 # pretest: \`operator-runtime testenv use\` finds or downloads etcd and kube-apiserver
OPERATOR_RUNTIME_USE_EXISTING_CLUSTER=true KUBECONFIG=~/.kube/config npm test   # or your cluster (kind, k3d)
npm run generate         # rewrite config/ after changing the schema or the controller's declarations
npm run bundle           # write bundle/ (an OLM bundle, version from package.json) and validate it
npm run sbom             # sbom.cdx.json: CycloneDX SBOM of the production dependencies (from package-lock.json)
npm run lint             # operator-runtime lint: reconciler anti-patterns in src/, API conventions on the kind
npm run build && KUBECONFIG=~/.kube/config npm start
kubectl apply -k config  # deploy (build and push the image first)
\`\`\`

The test's control plane: \`npm test\` first runs \`operator-runtime testenv use\`, which uses
\`OPERATOR_RUNTIME_ASSETS\` / \`KUBEBUILDER_ASSETS\` or setup-envtest's binaries when set or
present, else downloads envtest's (checked against the sha512 of controller-tools' index) into
\`~/.cache/operator-runtime/envtest\`. Offline, point \`OPERATOR_RUNTIME_ENVTEST_INDEX\` at a mirror;
behind a proxy, set \`HTTPS_PROXY\`. See operator-runtime's docs/testing.md.

Supply chain: \`npm run sbom\` lists what \`npm ci --omit=dev\` installs, never the dev tooling;
\`npx operator-runtime sbom --image <dir>\` lists an image's runtime files instead. Sign the SBOM and
the packed artifacts with cosign: \`npx operator-runtime sign sbom.cdx.json --key cosign.key\`, then
\`npx operator-runtime verify sbom.cdx.json --key cosign.pub\` (operator-runtime's docs/supply-chain.md,
also for keyless signing in a release pipeline).

Files in \`config/\` are generated: change the schema, the controller's \`writes\` or
\`operator-runtime.config.ts\` and run \`npm run generate\`; put environment-specific changes in a
Kustomize overlay.
`;
}

/** One object of the kind to try the operator with; `npm run bundle` puts it in the CSV's alm-examples. */
export function samplesYaml(n: ScaffoldNames): string {
  return `# A sample ${n.kind}: kubectl apply -f config/samples.yaml (also the OLM bundle's alm-examples).
apiVersion: ${n.group}/v1
kind: ${n.kind}
metadata:
  name: hello
spec:
  message: Hello from operator-runtime
`;
}

export function projectFiles(n: ScaffoldNames): FileToWrite[] {
  return [
    { path: 'package.json', content: packageJson(n) },
    { path: 'tsconfig.json', content: TSCONFIG },
    { path: 'tsconfig.build.json', content: TSCONFIG_BUILD },
    { path: 'Dockerfile', content: dockerfile(n) },
    { path: '.dockerignore', content: 'node_modules\ndist\n' },
    { path: '.gitignore', content: 'node_modules\ndist\nsbom.cdx.json\n' },
    { path: 'README.md', content: readme(n) },
    { path: 'config/samples.yaml', content: samplesYaml(n) },
  ];
}
