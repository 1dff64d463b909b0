/** The objects a Database owns, as desired state: pure functions of the Database's spec. */
import type { ConfigMap, Secret, Service } from 'kubernetes-types/core/v1.js';
import type { StatefulSet } from 'kubernetes-types/apps/v1.js';
import { kinds } from 'operator-runtime';
import { IMAGES, PORTS, type Database } from './database.js';

export const SECRET = kinds.Secret;
export const CONFIG_MAP = kinds.ConfigMap;
export const SERVICE = kinds.Service;
export const STATEFUL_SET = kinds.StatefulSet;

export const names = {
  secret: (db: Database) => `${db.metadata.name}-credentials`,
  configMap: (db: Database) => `${db.metadata.name}-config`,
  service: (db: Database) => db.metadata.name,
  statefulSet: (db: Database) => db.metadata.name,
};

export const MANAGED_BY = 'database-operator';
/** Every object the operator creates carries this label; its cache holds only those of the owned kinds. */
export const MANAGED_BY_SELECTOR = `app.kubernetes.io/managed-by=${MANAGED_BY}`;

export function labels(db: Database): Record<string, string> {
  return {
    'app.kubernetes.io/name': db.spec.engine,
    'app.kubernetes.io/instance': db.metadata.name,
    'app.kubernetes.io/managed-by': MANAGED_BY,
  };
}

/**
 * The credentials Secret without its password: the reconciler adds a generated one when it creates
 * the Secret, and never regenerates it while the Secret exists.
 */
export function desiredSecret(db: Database): Secret & { metadata: { name: string; namespace: string } } {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: names.secret(db), namespace: db.metadata.namespace, labels: labels(db) },
    type: 'Opaque',
    stringData: { username: db.spec.engine === 'postgres' ? 'postgres' : 'root' },
  };
}

export function engineConfig(db: Database): Record<string, string> {
  return db.spec.engine === 'postgres'
    ? {
        'postgresql.conf': `listen_addresses = '*'\nmax_connections = ${50 * db.spec.replicas}\nshared_buffers = 128MB\n`,
      }
    : { 'my.cnf': `[mysqld]\nbind-address = 0.0.0.0\nmax_connections = ${50 * db.spec.replicas}\n` };
}

export function desiredConfigMap(db: Database): ConfigMap & { metadata: { name: string; namespace: string } } {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: names.configMap(db), namespace: db.metadata.namespace, labels: labels(db) },
    data: engineConfig(db),
  };
}

/** Headless Service: stable DNS names for the StatefulSet's pods. */
export function desiredService(db: Database): Service & { metadata: { name: string; namespace: string } } {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: names.service(db), namespace: db.metadata.namespace, labels: labels(db) },
    spec: {
      clusterIP: 'None',
      selector: labels(db),
      // The container's named port (kubernetes-types types an IntOrString as string: a name is both).
      ports: [{ name: db.spec.engine, port: PORTS[db.spec.engine], targetPort: db.spec.engine }],
    },
  };
}

export function desiredStatefulSet(db: Database): StatefulSet & { metadata: { name: string; namespace: string } } {
  const engine = db.spec.engine;
  const passwordEnv = engine === 'postgres' ? 'POSTGRES_PASSWORD' : 'MYSQL_ROOT_PASSWORD';
  const configDir = engine === 'postgres' ? '/etc/postgresql' : '/etc/mysql/conf.d';
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: names.statefulSet(db), namespace: db.metadata.namespace, labels: labels(db) },
    spec: {
      replicas: db.spec.replicas,
      serviceName: names.service(db),
      selector: { matchLabels: labels(db) },
      template: {
        metadata: { labels: labels(db) },
        spec: {
          containers: [
            {
              name: engine,
              image: IMAGES[engine](db.spec.version),
              ports: [{ name: engine, containerPort: PORTS[engine] }],
              env: [{ name: passwordEnv, valueFrom: { secretKeyRef: { name: names.secret(db), key: 'password' } } }],
              volumeMounts: [
                { name: 'data', mountPath: '/var/lib/data' },
                { name: 'config', mountPath: configDir },
              ],
            },
          ],
          volumes: [{ name: 'config', configMap: { name: names.configMap(db) } }],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: db.spec.storage } } },
        },
      ],
    },
  };
}
