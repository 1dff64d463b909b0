/**
 * The wire shapes of the two reviews a webhook answers, v1 only (admission.k8s.io/v1
 * AdmissionReview, apiextensions.k8s.io/v1 ConversionReview), as kube-apiserver 1.16+ sends them.
 */
import type { KubeObject } from '../core/object-key.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

/** admission.k8s.io/v1 AdmissionRequest: what kube-apiserver asks about one write. */
export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subResource?: string;
  readonly requestKind?: GroupVersionKind;
  readonly requestResource?: GroupVersionResource;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation: AdmissionOperation;
  readonly userInfo: {
    readonly username?: string;
    readonly uid?: string;
    readonly groups?: readonly string[];
    readonly extra?: Readonly<Record<string, readonly string[]>>;
  };
  readonly object?: KubeObject | null;
  readonly oldObject?: KubeObject | null;
  readonly dryRun?: boolean;
  readonly options?: unknown;
}

/** admission.k8s.io/v1 AdmissionResponse. */
export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: { readonly code?: number; readonly message?: string; readonly reason?: string };
  readonly patch?: string;
  readonly patchType?: 'JSONPatch';
  readonly warnings?: readonly string[];
}

export interface AdmissionReview {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly request?: AdmissionRequest;
  readonly response?: AdmissionResponse;
}

/** apiextensions.k8s.io/v1 ConversionRequest. */
export interface ConversionRequest {
  readonly uid: string;
  readonly desiredAPIVersion: string;
  readonly objects: readonly KubeObject[];
}

export interface ConversionResponse {
  readonly uid: string;
  readonly convertedObjects: readonly KubeObject[];
  readonly result: { readonly status: 'Success' } | { readonly status: 'Failure'; readonly message: string };
}

export interface ConversionReview {
  readonly apiVersion: 'apiextensions.k8s.io/v1';
  readonly kind: 'ConversionReview';
  readonly request?: ConversionRequest;
  readonly response?: ConversionResponse;
}
