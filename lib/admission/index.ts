import { answerAdmissionReview, parseAdmissionReview, reviewAdmission, type AdmissionVerdict } from './review.ts';
import { summarizeVerdict, type AdmissionSummary } from './summary.ts';

export { answerAdmissionReview, parseAdmissionReview, reviewAdmission, summarizeVerdict };
export type { AdmissionVerdict, AdmissionSummary };
