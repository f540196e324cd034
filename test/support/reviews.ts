/** Typed reading of AdmissionReview JSON in tests: Pod reviews as the fixtures hold them, answers, and their patches. */
import type { Operation } from 'fast-json-patch';
import type { AdmissionRequest, AdmissionReviewResponse } from '../../lib/admission/index.ts';
import type { Pod } from '../../lib/engine/index.ts';
import { type AdmissionReviewRequest } from '../../lib/admission/review-shapes.ts';

/** An AdmissionReview request whose object is a Pod, as the fixtures under test/fixtures/reviews hold them. */
export interface PodReview extends AdmissionReviewRequest {
  readonly request: AdmissionRequest & { readonly object: Pod };
}

/** The JSON text of a Pod review (a fixture or a review built by a test), parsed. */
export function parseReview(text: string): PodReview {
  return JSON.parse(text) as PodReview;
}

/** The JSON text of an AdmissionReview answer, parsed. */
export function parseAnswer(text: string): AdmissionReviewResponse {
  return JSON.parse(text) as AdmissionReviewResponse;
}

/** The operations of an AdmissionResponse's base64 JSON Patch; throws when the response carries no patch. */
export function decodePatch(patch: string | undefined): Operation[] {
  if (patch === undefined) throw new Error('the AdmissionResponse carries no patch');
  return JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as Operation[];
}
