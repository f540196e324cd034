/**
 * Pods that a rollout does not recreate from a template (a bare Pod, a Pod whose owner is not in the input, a Pod of a
 * custom controller) are recreated from their own spec: the report reads them as admission reads that recreation.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import {
  asRecreated,
  compileRuleSet,
  reviewPod,
  STAMP_ANNOTATION,
  type Pod,
  type RuleSet,
} from '../../lib/engine/index.ts';
import { createReport } from '../../lib/report/index.ts';
import { KEYLESS_STAMPS, keyedStamps } from '../../lib/stamp/index.ts';
import { randomPod, randomRules, storedByApiServer } from '../support/arbitraries.ts';
import { pod, preferred, req, rule, rules } from '../support/builders.ts';
import { type ReportOptions } from '../../lib/report/builder.ts';
import { type Verdict } from '../../lib/report/types.ts';

// The webhook's key; the report never has it.
const WEBHOOK_STAMPS = keyedStamps('report-test-stamp-key-0123456789abcdefghij');
const REPORT: ReportOptions = { stamps: KEYLESS_STAMPS };

/** The rule: it removes a key, and adds a preferred term that uses the key with another one. */
const PREFER_ZONE_A = rules(
  rule('prefer-zone-a', {
    mutationRemove: { nodeAffinity: { keys: ['topology.kubernetes.io/zone'] } },
    mutationAdd: {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          preferred(10, req('topology.kubernetes.io/zone', 'In', 'a'), req('example.com/tier', 'In', 'web')),
        ],
      },
    },
  }),
);

/** The rule once changed: it adds another preference, and removes nothing. */
const PREFER_ZONE_A_CHANGED = rules(
  rule('prefer-zone-a', {
    mutationAdd: {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [preferred(20, req('topology.kubernetes.io/zone', 'In', 'a'))],
      },
    },
  }),
);

/** The Pod the cluster runs after admitting `spec` through the webhook: stored, named, given a uid and a phase. */
function admitted(spec: Pod, ruleSet: RuleSet, requestUid: string): Pod {
  const stored = storedByApiServer(
    reviewPod({ pod: spec, namespace: 'production', ruleSet, context: { requestUid } }, { stamps: WEBHOOK_STAMPS }).pod,
  );
  return {
    ...stored,
    metadata: { ...stored.metadata, name: stored.metadata?.name ?? 'web-abcde', uid: `pod-of-${requestUid}` },
    status: { phase: 'Running' },
  };
}

/**
 * The Pod recreated from the running Pod's own spec, as docs/api.md *Re-applying rules* does it (`kubectl get -o json`,
 * spec.nodeName deleted, `kubectl replace --force`): without its uid, status, managedFields and binding.
 */
function recreated(running: Pod, ruleSet: RuleSet, requestUid: string): Pod {
  const unbound = asRecreated(running);
  const metadata = { ...unbound.metadata };
  delete metadata.uid;
  delete metadata.managedFields;
  const spec: Record<string, unknown> = { ...unbound, metadata };
  delete spec.status;
  return admitted(spec, ruleSet, requestUid);
}

function verdictOf(running: Pod, ruleSet: RuleSet, options: ReportOptions = REPORT): Verdict | undefined {
  return createReport(ruleSet, options).addPod(running, 'pod');
}

const ORIGINS: readonly { readonly name: string; readonly spec: Pod }[] = [
  { name: 'a bare Pod', spec: pod({ name: 'web-abcde' }) },
  { name: 'a Pod whose owner is not in the input', spec: pod() },
  { name: 'a Pod of a custom controller', spec: pod({ owner: { kind: 'WebApp', name: 'web' } }) },
];

describe('the report of a Pod recreated from its own spec', () => {
  it.each(ORIGINS)(
    'reads $name that the webhook admitted under the same rules as current, where reading it as it runs gave pending',
    ({ spec }) => {
      const running = admitted(spec, PREFER_ZONE_A, 'admission-1');

      expect(running.metadata?.annotations?.[STAMP_ANNOTATION]).toBeDefined();
      expect(verdictOf(running, PREFER_ZONE_A, {})).toBe('pending');
      expect(verdictOf(running, PREFER_ZONE_A)).toBe('current');
    },
  );

  it.each(ORIGINS)('reads $name pending once the rule changes, and current after its recreation', ({ spec }) => {
    const changed = PREFER_ZONE_A_CHANGED;
    const running = admitted(spec, PREFER_ZONE_A, 'admission-1');

    expect(verdictOf(running, changed)).toBe('pending');
    expect(verdictOf(recreated(running, changed, 'admission-2'), changed)).toBe('current');
  });

  it('has no verdict that recreating the Pod does not clear: after one recreation under the rules, none is pending', () => {
    fc.assert(
      fc.property(randomPod, randomRules, randomRules, (template, before, after) => {
        const bare: Pod = {
          ...template,
          metadata: {
            name: 'web-abcde',
            namespace: 'production',
            labels: { app: 'web' },
            annotations: template.metadata?.annotations,
          },
        };
        const rulesAfter = compileRuleSet(after);
        const running = admitted(bare, compileRuleSet(before), 'admission-1');
        fc.pre(
          reviewPod(
            { pod: running, namespace: 'production', ruleSet: rulesAfter, context: { requestUid: 'admission-2' } },
            { stamps: WEBHOOK_STAMPS },
          ).decision !== 'denied',
        );

        expect(['current', 'unaffected']).toContain(
          verdictOf(recreated(running, rulesAfter, 'admission-2'), rulesAfter),
        );
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 300) },
    );
  });
});

/** A rule that pins every Pod to the merged pool. */
const PIN_MERGED = rules(rule('pin-merged', { mutationAdd: { nodeSelector: { 'example.com/node-pool': 'merged' } } }));

describe('the report of a bare Pod and its binding', () => {
  it('reads a Pod the scheduler bound as its recreation, which sends no spec.nodeName: current, then pending once the rule changes', () => {
    const running = admitted(pod({ name: 'web-abcde' }), PIN_MERGED, 'admission-1');
    const changed = rules(rule('pin-merged', { mutationAdd: { nodeSelector: { 'example.com/node-pool': 'spot' } } }));

    expect(running.spec?.nodeName).toBeDefined();
    expect(verdictOf(running, PIN_MERGED)).toBe('current');
    expect(verdictOf(running, changed)).toBe('pending');
  });

  it('reads a Pod created bound to its Node (its managedFields own spec.nodeName) unaffected, as admission leaves it', () => {
    const running = admitted(pod({ name: 'node-debugger', nodeName: 'ip-10-0-1-23' }), PIN_MERGED, 'admission-1');

    expect(running.metadata?.annotations?.[APPLIED_ANNOTATION]).toBeUndefined();
    expect(verdictOf(running, PIN_MERGED)).toBe('unaffected');
  });

  it('reads a mirror Pod unaffected, whatever its managedFields say', () => {
    const mirror = pod({
      name: 'etcd-ip-10-0-1-23',
      owner: { kind: 'Node', name: 'ip-10-0-1-23' },
      annotations: { 'kubernetes.io/config.mirror': '3c0a5a1e' },
      nodeName: 'ip-10-0-1-23',
    });
    const running = { ...mirror, status: { phase: 'Running' } };

    expect(verdictOf(running, PIN_MERGED)).toBe('unaffected');
  });

  it('reads a Pod without the topology labels its binding added, which no manager of it owns', () => {
    const zoned = rules(
      rule('zoned-to-merged', {
        workloadSelector: {
          labelSelector: { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'Exists' }] },
        },
        mutationAdd: { nodeSelector: { 'example.com/node-pool': 'merged' } },
      }),
    );
    const running = admitted(pod({ name: 'web-abcde', labels: { app: 'web' } }), zoned, 'admission-1');

    expect(running.metadata?.labels?.['topology.kubernetes.io/zone']).toBe('eu-west-1a');
    expect(verdictOf(running, zoned)).toBe('unaffected');
  });

  it('reads a bare Pod created with generateName current under its rules, and pending once they change', () => {
    const generated = pod({ generateName: 'debug-shell-', owner: null, labels: { app: 'debug' } });
    const running = admitted(generated, PREFER_ZONE_A, 'admission-1');
    const changed = PREFER_ZONE_A_CHANGED;

    expect(running.metadata?.name).toMatch(/^debug-shell-/);
    expect(verdictOf(running, PREFER_ZONE_A)).toBe('current');
    expect(verdictOf(running, changed)).toBe('pending');
  });
});
