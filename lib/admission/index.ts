import {
  answerAdmissionRequest,
  answerAdmissionReview,
  parseAdmissionReview,
  passThroughReason,
  readAdmissionReview,
} from './review.ts';
import { summarizeVerdict } from './summary.ts';
import type { AdmissionRequest, AdmissionReviewResponse } from './review-shapes.ts';

export {
  answerAdmissionRequest,
  answerAdmissionReview,
  parseAdmissionReview,
  passThroughReason,
  readAdmissionReview,
  summarizeVerdict,
};
export type { AdmissionRequest, AdmissionReviewResponse };
