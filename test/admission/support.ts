/** Test support for the admission boundary: a rule that reads and rewrites every scheduling field of a Pod. */
import type { NormalizedRule } from '../../lib/api/index.ts';
import { rule } from '../support/builders.ts';

/** Matches every production Pod, removes from and adds to every scheduling field, so each field is read and rewritten. */
export function writeEverything(): NormalizedRule {
  return rule('write-everything', {
    workloadSelector: { namespaces: ['production'] },
    mutationRemove: {
      nodeAffinity: { keys: ['example.com/node-pool'] },
      tolerations: { keys: ['example.com/old'] },
      nodeSelector: { keys: ['example.com/old'] },
    },
    mutationAdd: {
      annotations: { 'example.com/touched': 'yes' },
      nodeSelector: { 'example.com/pool': 'merged' },
      tolerations: [{ key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' }],
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'example.com/pool', operator: 'In', values: ['merged'] }] }],
        },
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 10,
            preference: { matchExpressions: [{ key: 'example.com/zone', operator: 'In', values: ['a'] }] },
          },
        ],
      },
    },
  });
}
