/**
 * The Database's admission and conversion webhooks:
 * - validation of what the schema cannot say: the engine never changes after creation, and
 *   while a backup runs (the deletion's backup-before-delete) `spec.replicas` cannot drop below
 *   the replicas already Ready (the backup reads from them); an unsupported version is a warning;
 *   a backup endpoint off the operator's allow-list is refused (tenants must not point the
 *   operator at arbitrary URLs);
 * - defaulting of `spec.backup.endpoint` to the operator's configured endpoint;
 * - conversion between v1 (stored) and v1alpha1 (`image` = "engine:version", `instances`).
 */
import { getCondition, type ObjectOf } from 'operator-runtime';
import { allow, deny, spoke, type ValidationResult, type Webhooks } from 'operator-runtime/webhook';
import { resolveBackupEndpoint, type BackupEndpointPolicy } from './backup-endpoints.js';
import { DATABASE, SUPPORTED_VERSIONS, type Database, type Engine } from './database.js';

export const DATABASE_V1ALPHA1 = DATABASE.version('v1alpha1');
export type DatabaseV1alpha1 = ObjectOf<typeof DATABASE_V1ALPHA1>;

/** The reconciler's condition reason while the backup before delete runs. */
const BACKUP_RUNNING = 'BackupRunning';

/** Whether the Database's backup is running, as its status says. */
function backupRunning(db: Database): boolean {
  return getCondition(db.status?.conditions, 'BackedUp')?.reason === BACKUP_RUNNING;
}

/** The validating webhook's decision on a create (`old` undefined) or an update. */
export function validateDatabase(
  db: Database,
  old: Database | undefined,
  policy: BackupEndpointPolicy,
): ValidationResult {
  if (old && db.spec.engine !== old.spec.engine) {
    return deny(
      `spec.engine cannot change (${old.spec.engine} to ${db.spec.engine}): create a new Database and migrate the data`,
    );
  }
  const ready = old?.status?.readyReplicas ?? 0;
  // Lowering below Ready while the backup reads from them; an unchanged count always passes.
  if (old && backupRunning(old) && db.spec.replicas < old.spec.replicas && db.spec.replicas < ready) {
    return deny(
      `spec.replicas cannot drop below the ${ready} Ready replicas while a backup is running (asked: ${db.spec.replicas}); retry once it completed`,
    );
  }
  // Judged only when they change: the operator's own updates (finalizers) of an object stored
  // before this webhook existed must not be refused for what it already says.
  const endpoint = resolveBackupEndpoint(db, policy);
  if (!endpoint.allowed && db.spec.backup?.endpoint !== old?.spec.backup?.endpoint) return deny(endpoint.message);
  if (db.spec.version !== old?.spec.version && !SUPPORTED_VERSIONS[db.spec.engine].includes(db.spec.version)) {
    return allow(
      `spec.version ${db.spec.version} is not one the operator runs for ${db.spec.engine} (${SUPPORTED_VERSIONS[db.spec.engine].join(', ')}): the Database will be Degraded`,
    );
  }
  return allow();
}

/** The mutating webhook: a backup endpoint left out is the operator's own. */
export function defaultDatabase(db: Database, policy: BackupEndpointPolicy): Database {
  if (db.spec.backup?.enabled !== false && !db.spec.backup?.endpoint) {
    db.spec.backup = { ...db.spec.backup, endpoint: policy.defaultEndpoint };
  }
  return db;
}

/** v1alpha1 → v1 (the hub). */
export function toV1(db: DatabaseV1alpha1): Database {
  const { image, instances, ...rest } = db.spec;
  const colon = image.indexOf(':');
  // The v1alpha1 schema's pattern admits only these engines.
  const engine: Engine = image.slice(0, colon) === 'mysql' ? 'mysql' : 'postgres';
  return {
    ...db,
    apiVersion: DATABASE.apiVersion,
    spec: { ...rest, engine, version: image.slice(colon + 1), replicas: instances },
  };
}

/** v1 → v1alpha1. */
export function fromV1(db: Database): DatabaseV1alpha1 {
  const { engine, version, replicas, ...rest } = db.spec;
  return {
    ...db,
    apiVersion: DATABASE_V1ALPHA1.apiVersion,
    spec: { ...rest, image: `${engine}:${version}`, instances: replicas },
  };
}

/** Registers the Database's validating, mutating and conversion webhooks. */
export function registerDatabaseWebhooks(webhooks: Webhooks, policy: BackupEndpointPolicy): void {
  webhooks.validate(DATABASE, (db, old) => validateDatabase(db, old, policy));
  webhooks.mutate(DATABASE, (db) => defaultDatabase(db, policy));
  webhooks.convert(DATABASE, { hub: DATABASE, spokes: [spoke(DATABASE_V1ALPHA1, { toHub: toV1, fromHub: fromV1 })] });
}
