import {
  answerAdmissionReview,
  parseAdmissionReview,
  reviewAdmission,
  type AdmissionVerdict,
  type ReviewOptions,
} from './review.ts';
import { summarizeVerdict, type AdmissionSummary } from './summary.ts';
import type {
  GroupVersionKind,
  GroupVersionResource,
  AdmissionRequest,
  Status,
  AdmissionResponse,
  AdmissionReviewRequest,
  AdmissionReviewResponse,
} from './kubernetes.ts';

export { answerAdmissionReview, parseAdmissionReview, reviewAdmission, summarizeVerdict };
export type {
  AdmissionVerdict,
  ReviewOptions,
  AdmissionSummary,
  GroupVersionKind,
  GroupVersionResource,
  AdmissionRequest,
  Status,
  AdmissionResponse,
  AdmissionReviewRequest,
  AdmissionReviewResponse,
};
