import { answerAdmissionReview, parseAdmissionReview } from './review.ts';
import { summarizeVerdict } from './summary.ts';
import type { AdmissionRequest, AdmissionReviewRequest, AdmissionReviewResponse } from './kubernetes.ts';

export { answerAdmissionReview, parseAdmissionReview, summarizeVerdict };
export type { AdmissionRequest, AdmissionReviewRequest, AdmissionReviewResponse };
