/** The response text the webhook sends: JSON.stringify's, byte for byte, whatever the request's uid holds. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerAdmissionReview } from '../../lib/admission/index.ts';
import { keyedStamps } from '../../lib/stamp/index.ts';
import { admissionReview, pod, rule, rules } from '../support/builders.ts';

const RULES = rules(rule('add-pool', { mutationAdd: { nodeSelector: { pool: 'merged' } } }));
const STAMPS = keyedStamps('response-text-test-key-0123456789abcdefghij');

describe('the response text', () => {
  it('is JSON.stringify of the response for any uid, one that looks like the patch member included', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ minLength: 1 }), fc.constant('"patch":""'), fc.constant('\\"patch\\":\\"\\"')),
        (uid) => {
          const answered = answerAdmissionReview(JSON.stringify(admissionReview(pod(), { uid })), RULES, {
            stamps: STAMPS,
          });

          expect(answered.verdict.response.response.patch).toBeDefined();
          expect(answered.body).toBe(JSON.stringify(answered.verdict.response));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is JSON.stringify of a response without a patch', () => {
    const answered = answerAdmissionReview(
      JSON.stringify(admissionReview(pod({ namespace: 'other' }), { uid: '"patch":""' })),
      rules(),
      { stamps: STAMPS },
    );

    expect(answered.body).toBe(JSON.stringify(answered.verdict.response));
  });
});
