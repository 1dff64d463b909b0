/**
 * The Database's v1alpha1 schema: the shape before v1, still served so old manifests keep
 * working. It named engine and version together as `image` ("postgres:16") and replicas
 * `instances`; the conversion webhook (webhooks.ts) maps it to and from v1, the stored version.
 */
import { Type } from 'operator-runtime/crd';
import { DatabaseSpecSchema } from './database-schema.js';

export const DatabaseV1alpha1SpecSchema = Type.Object({
  image: Type.String({
    pattern: '^(postgres|mysql):[0-9]+(\\.[0-9]+){0,2}$',
    maxLength: 64,
    description: 'Engine and version, e.g. "postgres:16" (v1: spec.engine and spec.version).',
  }),
  instances: Type.Integer({ minimum: 1, maximum: 9, description: 'v1: spec.replicas.' }),
  storage: DatabaseSpecSchema.properties.storage,
  backup: DatabaseSpecSchema.properties.backup,
});
