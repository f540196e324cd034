import { answerAdmissionReview, parseAdmissionReview, passThroughReason } from './review.ts';
import { summarizeVerdict } from './summary.ts';
import type { AdmissionRequest, AdmissionReviewRequest, AdmissionReviewResponse } from './kubernetes.ts';

export { answerAdmissionReview, parseAdmissionReview, passThroughReason, summarizeVerdict };
export type { AdmissionRequest, AdmissionReviewRequest, AdmissionReviewResponse };
