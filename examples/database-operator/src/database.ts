/** The Database custom resource (databases.example.com/v1), as plain JSON. */
import { kind, type Condition, type Kind } from 'operator-runtime';

/** The Database kind: `client.get(DATABASE, …)` is a `Database`, `.for(DATABASE)` types the reconciler's `ctx.get()`. */
export const DATABASE: Kind<Database> = kind<Database>('example.com/v1', 'Database');
export const FINALIZER = 'example.com/backup-before-delete';
export const FIELD_MANAGER = 'database-operator';

export type Engine = 'postgres' | 'mysql';
export type Phase = 'Provisioning' | 'Ready' | 'Degraded' | 'Deleting';

export interface DatabaseSpec {
  engine: Engine;
  version: string;
  replicas: number;
  storage: string;
  backup?: { enabled?: boolean; endpoint?: string };
}

export interface DatabaseStatus {
  phase?: Phase;
  readyReplicas?: number;
  observedGeneration?: number;
  endpoint?: string;
  conditions?: Condition[];
}

export interface Database {
  apiVersion: 'example.com/v1';
  kind: 'Database';
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    generation: number;
    resourceVersion: string;
    finalizers?: string[];
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: DatabaseSpec;
  status?: DatabaseStatus;
}

/** Versions the operator knows how to run; the schema only checks the shape. */
export const SUPPORTED_VERSIONS: Record<Engine, readonly string[]> = {
  postgres: ['14', '15', '16'],
  mysql: ['8.0', '8.4'],
};

export const IMAGES: Record<Engine, (version: string) => string> = {
  postgres: (v) => `postgres:${v}`,
  mysql: (v) => `mysql:${v}`,
};

export const PORTS: Record<Engine, number> = { postgres: 5432, mysql: 3306 };
