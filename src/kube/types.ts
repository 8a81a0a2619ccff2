/**
 * @module
 * The few Kubernetes object shapes Tether reads (metadata, owner references, TokenReview status),
 * as plain JSON types independent of the client library's model classes.
 * Used by `kube/client.ts`, `auth/exchange/*` and the API-server double in `test/kube/`.
 */

/** An owner reference exactly as the API server returns it. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The part of `metadata` Tether looks at. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  /** RFC 3339 time; set while the object is being deleted. */
  deletionTimestamp?: string;
  ownerReferences?: OwnerReference[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Changes on every write; a watch resumes from it. */
  resourceVersion?: string;
  /** Bumped by the API server when `spec` changes. */
  generation?: number;
}

/** Any namespaced object, reduced to what the owner chain needs. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
}

/** A whole object as read and written by the Kubernetes runtime: metadata plus free-form spec and status. */
export interface KubeResource extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** One condition of `status.conditions` (metav1.Condition). */
export interface KubeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  /** The `metadata.generation` the condition was computed for. */
  observedGeneration?: number;
}

/** `status.user` of a TokenReview (authentication.k8s.io/v1). */
export interface TokenReviewUser {
  username?: string;
  uid?: string;
  groups?: string[];
  /** Values are arrays of strings on the wire. */
  extra?: Record<string, string[]>;
}

/** `status` of a TokenReview (authentication.k8s.io/v1). */
export interface TokenReviewStatus {
  authenticated?: boolean;
  user?: TokenReviewUser;
  audiences?: string[];
  error?: string;
}
