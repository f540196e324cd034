import { answerAdmissionReview, reviewAdmission, type AdmissionVerdict } from './review.ts';
import { summarizeVerdict, type AdmissionSummary } from './summary.ts';
import type { GroupVersionKind, GroupVersionResource, AdmissionRequest, Status, AdmissionResponse, AdmissionReviewRequest, AdmissionReviewResponse } from './kubernetes.ts';

export { answerAdmissionReview, reviewAdmission, summarizeVerdict };
export type {
  AdmissionVerdict,
  AdmissionSummary,
  GroupVersionKind,
  GroupVersionResource,
  AdmissionRequest,
  Status,
  AdmissionResponse,
  AdmissionReviewRequest,
  AdmissionReviewResponse,
};
