/** The admission.k8s.io/v1 AdmissionReview shapes the webhook reads and answers. */
/** A meta/v1 GroupVersionKind as used in AdmissionRequest.kind. */
interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** A meta/v1 GroupVersionResource as used in AdmissionRequest.resource. */
interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

/** An admission.k8s.io/v1 AdmissionRequest. */
interface AdmissionRequest {
  readonly uid: string;
  readonly kind?: GroupVersionKind;
  readonly resource?: GroupVersionResource;
  readonly subResource?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation?: string;
  readonly dryRun?: boolean;
  readonly object?: unknown;
  readonly [field: string]: unknown;
}

/** A meta/v1 Status as used in a denial. */
interface Status {
  readonly code?: number;
  readonly message?: string;
  readonly reason?: string;
}

/** An admission.k8s.io/v1 AdmissionResponse. */
interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly patchType?: 'JSONPatch';
  readonly patch?: string;
  readonly status?: Status;
  readonly warnings?: readonly string[];
}

/**
 * An admission.k8s.io/v1 AdmissionReview carrying a request.
 * @internal Exported for tests: tests build AdmissionReviews with it; the admission layer reads untrusted JSON, never this shape.
 */
interface AdmissionReviewRequest {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly request: AdmissionRequest;
}

/** An admission.k8s.io/v1 AdmissionReview carrying a response. */
interface AdmissionReviewResponse {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}

export type {
  GroupVersionKind,
  GroupVersionResource,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReviewRequest,
  AdmissionReviewResponse,
};
