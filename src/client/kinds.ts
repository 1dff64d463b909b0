/**
 * Built-in kinds as typed descriptors, their object types from `kubernetes-types`:
 * `client.get(kinds.StatefulSet, name, { namespace })` is a `Promise<StatefulSet>`.
 */
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { DaemonSet, Deployment, ReplicaSet, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { CronJob, Job } from 'kubernetes-types/batch/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type {
  ConfigMap,
  Endpoints,
  Event,
  Namespace,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  Secret,
  Service,
  ServiceAccount,
} from 'kubernetes-types/core/v1.js';
import type { Ingress, NetworkPolicy } from 'kubernetes-types/networking/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-types/rbac/v1.js';
import { kind } from './kind.js';

export const kinds = {
  ConfigMap: kind<ConfigMap>('v1', 'ConfigMap'),
  Endpoints: kind<Endpoints>('v1', 'Endpoints'),
  Event: kind<Event>('v1', 'Event'),
  Namespace: kind<Namespace>('v1', 'Namespace'),
  Node: kind<Node>('v1', 'Node'),
  PersistentVolume: kind<PersistentVolume>('v1', 'PersistentVolume'),
  PersistentVolumeClaim: kind<PersistentVolumeClaim>('v1', 'PersistentVolumeClaim'),
  Pod: kind<Pod>('v1', 'Pod'),
  Secret: kind<Secret>('v1', 'Secret'),
  Service: kind<Service>('v1', 'Service'),
  ServiceAccount: kind<ServiceAccount>('v1', 'ServiceAccount'),
  DaemonSet: kind<DaemonSet>('apps/v1', 'DaemonSet'),
  Deployment: kind<Deployment>('apps/v1', 'Deployment'),
  ReplicaSet: kind<ReplicaSet>('apps/v1', 'ReplicaSet'),
  StatefulSet: kind<StatefulSet>('apps/v1', 'StatefulSet'),
  CronJob: kind<CronJob>('batch/v1', 'CronJob'),
  Job: kind<Job>('batch/v1', 'Job'),
  Lease: kind<Lease>('coordination.k8s.io/v1', 'Lease'),
  Ingress: kind<Ingress>('networking.k8s.io/v1', 'Ingress'),
  NetworkPolicy: kind<NetworkPolicy>('networking.k8s.io/v1', 'NetworkPolicy'),
  PodDisruptionBudget: kind<PodDisruptionBudget>('policy/v1', 'PodDisruptionBudget'),
  ClusterRole: kind<ClusterRole>('rbac.authorization.k8s.io/v1', 'ClusterRole'),
  ClusterRoleBinding: kind<ClusterRoleBinding>('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'),
  Role: kind<Role>('rbac.authorization.k8s.io/v1', 'Role'),
  RoleBinding: kind<RoleBinding>('rbac.authorization.k8s.io/v1', 'RoleBinding'),
  CustomResourceDefinition: kind<CustomResourceDefinition>('apiextensions.k8s.io/v1', 'CustomResourceDefinition'),
} as const;
