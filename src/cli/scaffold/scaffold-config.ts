/**
 * The scaffold's project config, built in-process: the same kind (schema) and controller
 * declarations that source-files.ts writes as TypeScript. `init` generates the `config` folder from it before
 * the new project has any dependency installed; scripts/scaffold.int.test.ts proves the two agree
 * (`npm run generate` in the scaffold rewrites that folder byte for byte).
 */
import { Type } from '../../crd/typebox.js';
import { kinds } from '../../client/kinds.js';
import type { OperatorProjectConfig } from '../../codegen/config.js';
import { defineCustomKind } from '../../crd/custom-kind.js';
import { k8s } from '../../crd/k8s.js';
import { Manager } from '../../manager/manager.js';
import { offlineClient } from '../../rbac/offline-client.js';
import type { ScaffoldNames } from './scaffold-names.js';
import { SCAFFOLD_MESSAGE_MAX_LENGTH, SCAFFOLD_NAME_MAX_LENGTH } from './source-files.js';

export function scaffoldProjectConfig(n: ScaffoldNames): OperatorProjectConfig {
  const kind = defineCustomKind({
    group: n.group,
    names: { kind: n.kind, plural: n.plural, singular: n.singular },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          spec: Type.Object({ message: Type.String({ minLength: 1, maxLength: SCAFFOLD_MESSAGE_MAX_LENGTH }) }),
          status: Type.Object({
            observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
            configMap: Type.Optional(Type.String({ maxLength: SCAFFOLD_NAME_MAX_LENGTH })),
            conditions: Type.Optional(k8s.conditions({ maxItems: 16 })),
          }),
        },
        subresources: { status: {} },
      },
    ],
  });
  return {
    name: n.name,
    namespace: n.namespace,
    image: `example.com/${n.name}:0.1.0`,
    kinds: [kind],
    manager: () => {
      const manager = new Manager({ client: offlineClient() });
      manager
        .controller(n.controller)
        .for(kind)
        .owns(kinds.ConfigMap)
        .writes(kinds.ConfigMap, ['create', 'patch'])
        .writes(kind, ['patch'], { subresource: 'status' })
        // Never run: only the declarations matter here.
        .complete(async () => undefined);
      return manager;
    },
    outDir: 'config',
  };
}
