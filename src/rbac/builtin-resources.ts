/**
 * Plural resource names and scopes of built-in kinds, so RBAC can be generated without an API
 * server. Keyed by API group and kind (both are the same in every version of a group).
 * `builtin-resources.int.test.ts` checks every entry against a real kube-apiserver's discovery.
 */

export interface BuiltinResource {
  /** Plural resource name, as in URLs and RBAC rules. */
  readonly resource: string;
  readonly namespaced: boolean;
}

const ns = (resource: string): BuiltinResource => ({ resource, namespaced: true });
const cluster = (resource: string): BuiltinResource => ({ resource, namespaced: false });

/** `group/Kind` → resource; the core group is ''. */
export const BUILTIN_RESOURCES: ReadonlyMap<string, BuiltinResource> = new Map(
  Object.entries({
    '/ConfigMap': ns('configmaps'),
    '/Endpoints': ns('endpoints'),
    '/Event': ns('events'),
    '/LimitRange': ns('limitranges'),
    '/Namespace': cluster('namespaces'),
    '/Node': cluster('nodes'),
    '/PersistentVolume': cluster('persistentvolumes'),
    '/PersistentVolumeClaim': ns('persistentvolumeclaims'),
    '/Pod': ns('pods'),
    '/PodTemplate': ns('podtemplates'),
    '/ReplicationController': ns('replicationcontrollers'),
    '/ResourceQuota': ns('resourcequotas'),
    '/Secret': ns('secrets'),
    '/Service': ns('services'),
    '/ServiceAccount': ns('serviceaccounts'),
    'admissionregistration.k8s.io/MutatingWebhookConfiguration': cluster('mutatingwebhookconfigurations'),
    'admissionregistration.k8s.io/ValidatingWebhookConfiguration': cluster('validatingwebhookconfigurations'),
    'apiextensions.k8s.io/CustomResourceDefinition': cluster('customresourcedefinitions'),
    'apps/ControllerRevision': ns('controllerrevisions'),
    'apps/DaemonSet': ns('daemonsets'),
    'apps/Deployment': ns('deployments'),
    'apps/ReplicaSet': ns('replicasets'),
    'apps/StatefulSet': ns('statefulsets'),
    'authentication.k8s.io/TokenReview': cluster('tokenreviews'),
    'authorization.k8s.io/LocalSubjectAccessReview': ns('localsubjectaccessreviews'),
    'authorization.k8s.io/SelfSubjectAccessReview': cluster('selfsubjectaccessreviews'),
    'authorization.k8s.io/SubjectAccessReview': cluster('subjectaccessreviews'),
    'autoscaling/HorizontalPodAutoscaler': ns('horizontalpodautoscalers'),
    'batch/CronJob': ns('cronjobs'),
    'batch/Job': ns('jobs'),
    'certificates.k8s.io/CertificateSigningRequest': cluster('certificatesigningrequests'),
    'coordination.k8s.io/Lease': ns('leases'),
    'discovery.k8s.io/EndpointSlice': ns('endpointslices'),
    'events.k8s.io/Event': ns('events'),
    'networking.k8s.io/Ingress': ns('ingresses'),
    'networking.k8s.io/IngressClass': cluster('ingressclasses'),
    'networking.k8s.io/NetworkPolicy': ns('networkpolicies'),
    'policy/PodDisruptionBudget': ns('poddisruptionbudgets'),
    'rbac.authorization.k8s.io/ClusterRole': cluster('clusterroles'),
    'rbac.authorization.k8s.io/ClusterRoleBinding': cluster('clusterrolebindings'),
    'rbac.authorization.k8s.io/Role': ns('roles'),
    'rbac.authorization.k8s.io/RoleBinding': ns('rolebindings'),
    'scheduling.k8s.io/PriorityClass': cluster('priorityclasses'),
    'storage.k8s.io/StorageClass': cluster('storageclasses'),
  }),
);
