import { describe, expect, it } from 'vitest';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import { compileRuleSet, reviewPod, type RuleSet } from '../../lib/engine/index.ts';
import type { Pod } from '../../lib/engine/index.ts';
import type { NodeSelectorTerm } from '../../lib/scheduling/index.ts';
import { loadRuleFiles } from '../../lib/rule-files/index.ts';
import { pod, preferred, req, required, rule, rules, termOf } from '../support/builders.ts';
import { EXAMPLES } from '../support/fixtures.ts';

const context = { requestUid: 'uid-1' };

function run(input: Pod, ruleSet: RuleSet) {
  return reviewPod({ pod: input, namespace: input.metadata?.namespace ?? 'production', ruleSet, context });
}

function requiredTerms(result: Pod): readonly NodeSelectorTerm[] | undefined {
  return result.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
}

const pool = (value: string) => req('example.com/pool', 'In', value);
const zone = (...values: string[]) => req('topology.kubernetes.io/zone', 'In', ...values);
const arch = (value: string) => req('kubernetes.io/arch', 'In', value);

describe('mutationRemove.nodeAffinity', () => {
  it('drops requirements with the removed keys from every required and preferred term', () => {
    const input = pod({
      required: [termOf(pool('a'), arch('amd64')), termOf(pool('b'), zone('z1'))],
      preferred: [preferred(10, pool('a'), zone('z1'))],
    });
    const outcome = run(input, rules(rule('r', { mutationRemove: { nodeAffinity: { keys: ['example.com/pool'] } } })));
    expect(requiredTerms(outcome.pod)).toEqual([termOf(arch('amd64')), termOf(zone('z1'))]);
    expect(outcome.pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution).toEqual([
      preferred(10, zone('z1')),
    ]);
  });

  it('removes a preferred term that the removal leaves empty ("If key removal empties a preferred term, that term is removed")', () => {
    const input = pod({
      required: [termOf(arch('amd64'))],
      preferred: [preferred(10, pool('a')), preferred(20, zone('z1'))],
    });
    const outcome = run(input, rules(rule('r', { mutationRemove: { nodeAffinity: { keys: ['example.com/pool'] } } })));
    expect(outcome.pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution).toEqual([
      preferred(20, zone('z1')),
    ]);
  });

  it('clears the whole required selector when a required term is emptied ("the complete required selector is cleared")', () => {
    const input = pod({ required: [termOf(pool('a')), termOf(pool('b'), zone('z1'))] });
    const outcome = run(input, rules(rule('r', { mutationRemove: { nodeAffinity: { keys: ['example.com/pool'] } } })));
    expect(requiredTerms(outcome.pod)).toBeUndefined();
    expect(outcome.pod.spec?.affinity).toBeUndefined();
  });

  it('keeps matchFields when removing label keys, since they are not label keys', () => {
    const term: NodeSelectorTerm = {
      matchExpressions: [pool('a')],
      matchFields: [req('metadata.name', 'In', 'node-1')],
    };
    const outcome = run(
      pod({ required: [term] }),
      rules(rule('r', { mutationRemove: { nodeAffinity: { keys: ['example.com/pool'] } } })),
    );
    expect(requiredTerms(outcome.pod)).toEqual([{ matchFields: [req('metadata.name', 'In', 'node-1')] }]);
  });

  it('removes required and preferred node affinity but keeps podAntiAffinity with all: true ("all: true affects only nodeAffinity")', () => {
    const antiAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } },
      ],
    };
    const input = pod({
      required: [termOf(pool('a'))],
      preferred: [preferred(5, zone('z1'))],
      podAntiAffinity: antiAffinity,
    });
    const outcome = run(input, rules(rule('r', { mutationRemove: { nodeAffinity: { all: true } } })));
    expect(outcome.pod.spec?.affinity).toEqual({ podAntiAffinity: antiAffinity });
  });
});

describe('mutationAdd.nodeAffinity required', () => {
  it('sets the added terms canonicalized when the Pod has no required selector', () => {
    const added = required(termOf(pool('m'), pool('m')), termOf(pool('m'), zone('z1')));
    const outcome = run(pod(), rules(rule('r', { mutationAdd: { nodeAffinity: added } })));
    expect(requiredTerms(outcome.pod)).toEqual([termOf(pool('m'))]);
  });

  it('ANDs with the current selector as a Cartesian product, current terms first ("the webhook creates the Cartesian combination")', () => {
    const input = pod({ required: [termOf(zone('z1')), termOf(zone('z2'))] });
    const outcome = run(
      input,
      rules(rule('r', { mutationAdd: { nodeAffinity: required(termOf(pool('a')), termOf(pool('b'))) } })),
    );
    expect(requiredTerms(outcome.pod)).toEqual([
      termOf(zone('z1'), pool('a')),
      termOf(zone('z1'), pool('b')),
      termOf(zone('z2'), pool('a')),
      termOf(zone('z2'), pool('b')),
    ]);
  });

  it('collapses identical requirements inside a combined term (identity is key, operator and set of values)', () => {
    const input = pod({ required: [termOf(req('topology.kubernetes.io/zone', 'In', 'z2', 'z1'))] });
    const outcome = run(
      input,
      rules(rule('r', { mutationAdd: { nodeAffinity: required(termOf(zone('z1', 'z2', 'z1'))) } })),
    );
    expect(requiredTerms(outcome.pod)).toEqual([termOf(req('topology.kubernetes.io/zone', 'In', 'z2', 'z1'))]);
  });

  it('drops a combined term that strictly contains another ("canonicalizes duplicate and redundant terms")', () => {
    const input = pod({ required: [termOf(zone('z1')), termOf(zone('z1'), arch('arm64'))] });
    const outcome = run(input, rules(rule('r', { mutationAdd: { nodeAffinity: required(termOf(pool('a'))) } })));
    expect(requiredTerms(outcome.pod)).toEqual([termOf(zone('z1'), pool('a'))]);
  });

  it('does not replace a requirement on the same key ("Adding a requirement does not implicitly replace another")', () => {
    const outcome = run(
      pod({ required: [termOf(pool('legacy'))] }),
      rules(rule('r', { mutationAdd: { nodeAffinity: required(termOf(pool('merged'))) } })),
    );
    expect(requiredTerms(outcome.pod)).toEqual([termOf(pool('legacy'), pool('merged'))]);
    expect(outcome.warnings).toEqual([expect.stringContaining('can match no node')]);
  });

  it('replaces a requirement with remove-then-add ("Use explicit remove-then-add when replacement is required")', () => {
    const outcome = run(
      pod({ required: [termOf(pool('legacy'), arch('amd64'))] }),
      rules(
        rule('r', {
          mutationRemove: { nodeAffinity: { keys: ['example.com/pool'] } },
          mutationAdd: { nodeAffinity: required(termOf(pool('merged'))) },
        }),
      ),
    );
    expect(requiredTerms(outcome.pod)).toEqual([termOf(arch('amd64'), pool('merged'))]);
    expect(outcome.warnings).toEqual([]);
  });

  it('carries matchFields already on the Pod into each combined term', () => {
    const term: NodeSelectorTerm = {
      matchExpressions: [zone('z1')],
      matchFields: [req('metadata.name', 'NotIn', 'node-9')],
    };
    const outcome = run(
      pod({ required: [term] }),
      rules(rule('r', { mutationAdd: { nodeAffinity: required(termOf(pool('a'))) } })),
    );
    expect(requiredTerms(outcome.pod)).toEqual([
      { matchExpressions: [zone('z1'), pool('a')], matchFields: [req('metadata.name', 'NotIn', 'node-9')] },
    ]);
  });

  it('drops empty terms already on the Pod before combining when other terms exist', () => {
    const outcome = run(
      pod({ required: [{}, termOf(zone('z1'))] }),
      rules(rule('r', { mutationAdd: { nodeAffinity: required(termOf(pool('a'))) } })),
    );
    expect(requiredTerms(outcome.pod)).toEqual([termOf(zone('z1'), pool('a'))]);
  });

  it('leaves a selector of only empty terms unchanged and warns, rather than let an AND broaden it', () => {
    const outcome = run(
      pod({ required: [{}, { matchExpressions: [] }] }),
      rules(rule('r', { mutationAdd: { nodeAffinity: required(termOf(pool('a'))) } })),
    );
    expect(requiredTerms(outcome.pod)).toEqual([{}, { matchExpressions: [] }]);
    expect(outcome.warnings).toEqual([expect.stringContaining('only empty terms')]);
  });
});

describe('mutationAdd.nodeAffinity preferred', () => {
  it('appends preferred entries and drops ones identical in weight and requirement set ("Preferred terms are appended and deduplicated")', () => {
    const input = pod({ preferred: [preferred(10, zone('z1', 'z2'))] });
    const added = {
      preferredDuringSchedulingIgnoredDuringExecution: [
        preferred(10, zone('z2', 'z1')),
        preferred(20, zone('z1', 'z2')),
      ],
    };
    const outcome = run(input, rules(rule('r', { mutationAdd: { nodeAffinity: added } })));
    expect(outcome.pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution).toEqual([
      preferred(10, zone('z1', 'z2')),
      preferred(20, zone('z1', 'z2')),
    ]);
  });
});

describe('other mutations', () => {
  it('sets annotations and nodeSelector entries, overwriting existing values', () => {
    const input = pod({
      annotations: { 'example.com/team': 'old' },
      nodeSelector: { 'example.com/pool': 'old', 'kubernetes.io/os': 'linux' },
    });
    const outcome = run(
      input,
      rules(
        rule('r', {
          mutationAdd: { annotations: { 'example.com/team': 'new' }, nodeSelector: { 'example.com/pool': 'new' } },
        }),
      ),
    );
    expect(outcome.pod.metadata?.annotations).toEqual({ 'example.com/team': 'new', [APPLIED_ANNOTATION]: 'r' });
    expect(outcome.pod.spec?.nodeSelector).toEqual({ 'example.com/pool': 'new', 'kubernetes.io/os': 'linux' });
  });

  it('removes nodeSelector keys', () => {
    const outcome = run(
      pod({ nodeSelector: { 'example.com/pool': 'old', 'kubernetes.io/os': 'linux' } }),
      rules(rule('r', { mutationRemove: { nodeSelector: { keys: ['example.com/pool'] } } })),
    );
    expect(outcome.pod.spec?.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
  });

  it('removes tolerations by key and appends added ones unless an identical one exists', () => {
    const spot = { key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' };
    const input = pod({
      tolerations: [
        { key: 'example.com/legacy', operator: 'Exists' },
        { key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' },
      ],
    });
    const outcome = run(
      input,
      rules(
        rule('r', {
          mutationRemove: { tolerations: { keys: ['example.com/legacy'] } },
          mutationAdd: { tolerations: [spot, { key: 'example.com/gpu', value: 'true', effect: 'NoSchedule' }] },
        }),
      ),
    );
    expect(outcome.pod.spec?.tolerations).toEqual([
      spot,
      { key: 'example.com/gpu', value: 'true', effect: 'NoSchedule' },
    ]);
  });

  it('treats an absent toleration operator as Equal when deduplicating', () => {
    const input = pod({
      tolerations: [{ key: 'example.com/gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
    });
    const outcome = run(
      input,
      rules(
        rule('r', { mutationAdd: { tolerations: [{ key: 'example.com/gpu', value: 'true', effect: 'NoSchedule' }] } }),
      ),
    );
    expect(outcome.pod.spec?.tolerations).toHaveLength(1);
  });
});

describe('processing model', () => {
  it('applies matching rules in ascending priority, then name, and records them in the applied annotation', () => {
    const ruleSet = rules(
      rule('zeta', { priority: 1, mutationAdd: { annotations: { 'example.com/last': 'zeta' } } }),
      rule('beta', { priority: 5, mutationAdd: { annotations: { 'example.com/last': 'beta' } } }),
      rule('alpha', { priority: 5, mutationAdd: { annotations: { 'example.com/last': 'alpha' } } }),
    );
    const outcome = run(pod(), ruleSet);
    expect(outcome.applied).toEqual(['zeta', 'alpha', 'beta']);
    expect(outcome.pod.metadata?.annotations).toEqual({
      'example.com/last': 'beta',
      [APPLIED_ANNOTATION]: 'zeta,alpha,beta',
    });
  });

  it('applies mutationRemove before mutationAdd within one rule', () => {
    const outcome = run(
      pod({ nodeSelector: { 'example.com/pool': 'legacy' } }),
      rules(
        rule('r', {
          mutationRemove: { nodeSelector: { keys: ['example.com/pool'] } },
          mutationAdd: { nodeSelector: { 'example.com/pool': 'merged' } },
        }),
      ),
    );
    expect(outcome.pod.spec?.nodeSelector).toEqual({ 'example.com/pool': 'merged' });
  });

  it('matches every rule against the original Pod, so what one rule adds cannot make another match ("A field added by one PodMutation therefore cannot cause another PodMutation to match")', () => {
    const ruleSet = rules(
      rule('first', { priority: 1, mutationAdd: { nodeSelector: { 'example.com/pool': 'merged' } } }),
      rule('second', {
        priority: 2,
        workloadSelector: { nodeSelectorMatch: { 'example.com/pool': 'merged' } },
        mutationAdd: { annotations: { 'example.com/x': 'y' } },
      }),
    );
    const outcome = run(pod(), ruleSet);
    expect(outcome.applied).toEqual(['first']);
  });

  it('does not apply a rule without enable: true ("enable ... default false")', () => {
    const disabled = rule('off', { enable: false, mutationAdd: { annotations: { 'example.com/x': 'y' } } });
    const outcome = reviewPod(
      { pod: pod(), namespace: 'production', ruleSet: rules(disabled), context },
      { explain: true },
    );
    expect(outcome.decision).toBe('unchanged');
    expect(outcome.evaluations.map((item) => [item.rule.name, item.outcome])).toEqual([['off', 'disabled']]);
  });

  it.each([
    ['a DaemonSet-owned Pod', pod({ owner: { kind: 'DaemonSet', name: 'node-exporter' } }), /^DaemonSet-owned Pods/],
    [
      'a Pod created bound to a Node (kubectl debug node/…, a custom scheduler)',
      pod({ name: 'node-debugger-ip-10-0-1-23-x7k2p', nodeName: 'ip-10-0-1-23.eu-west-1.compute.internal' }),
      /^Pods created bound to a Node \(spec\.nodeName set\) are not mutated: .*kubelet refuses/,
    ],
    [
      'a mirror Pod, owned by its Node',
      pod({
        name: 'etcd-ip-10-0-1-23',
        owner: { kind: 'Node', name: 'ip-10-0-1-23' },
        annotations: { 'kubernetes.io/config.mirror': '3c0a5a1e5f0b7c9d' },
        nodeName: 'ip-10-0-1-23',
      }),
      /^mirror Pods \(annotation kubernetes\.io\/config\.mirror\) are not mutated/,
    ],
  ])('never mutates %s, and says why', (_name, skipped, reason) => {
    const outcome = run(skipped, rules(rule('r', { mutationAdd: { annotations: { 'example.com/x': 'y' } } })));
    expect(outcome.decision).toBe('skipped');
    expect(outcome.skipReason).toMatch(reason);
    expect(outcome.patch).toEqual([]);
  });

  it('mutates a Pod whose spec.nodeName is empty: the scheduler binds it', () => {
    const outcome = run(
      pod({ nodeName: '' }),
      rules(rule('r', { mutationAdd: { annotations: { 'example.com/x': 'y' } } })),
    );
    expect(outcome.decision).toBe('mutated');
  });

  it('sets no applied annotation when no rule matched', () => {
    const outcome = run(
      pod(),
      rules(
        rule('r', {
          workloadSelector: { namespaces: ['other'] },
          mutationAdd: { annotations: { 'example.com/x': 'y' } },
        }),
      ),
    );
    expect(outcome.decision).toBe('unchanged');
    expect(outcome.pod.metadata?.annotations).toBeUndefined();
  });

  it('never edits the incoming Pod', () => {
    const input = pod({ required: [termOf(pool('a'))], nodeSelector: { a: 'b' }, annotations: { x: 'y' } });
    const copy = structuredClone(input);
    run(
      input,
      rules(
        rule('r', {
          mutationRemove: { nodeAffinity: { keys: ['example.com/pool'] }, nodeSelector: { keys: ['a'] } },
          mutationAdd: { annotations: { x: 'z' }, nodeAffinity: required(termOf(pool('b'))) },
        }),
      ),
    );
    expect(input).toEqual(copy);
  });

  it('produces the same bytes for the same input', () => {
    const ruleSet = rules(rule('r', { mutationAdd: { nodeAffinity: required(termOf(pool('a')), termOf(pool('b'))) } }));
    const input = pod({ required: [termOf(zone('z1')), termOf(zone('z2'))] });
    expect(JSON.stringify(run(input, ruleSet).patch)).toBe(JSON.stringify(run(structuredClone(input), ruleSet).patch));
  });
});

describe('untouched halves of node affinity', () => {
  it("keeps the Pod's own required selector byte for byte when a rule adds only preferred terms", () => {
    const own = [{}, { matchExpressions: [req('example.com/gen', 'Gt', '4'), req('example.com/gen', 'Gt', '4')] }];
    const outcome = run(
      pod({ required: own }),
      rules(
        rule('prefer', {
          mutationAdd: {
            nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [preferred(10, pool('a'))] },
          },
        }),
      ),
    );
    expect(requiredTerms(outcome.pod)).toBe(own);
    expect(outcome.patch.map((operation) => operation.path)).toEqual([
      '/metadata/annotations',
      '/spec/affinity/nodeAffinity',
    ]);
  });
});

describe('warnings ("each under 256 characters, at most a few per review")', () => {
  const addPool = (name: string) => rule(name, { mutationAdd: { nodeAffinity: required(termOf(pool('a'))) } });

  it('keeps at most four warnings', () => {
    const outcome = run(pod({ required: [{}] }), rules(...['w1', 'w2', 'w3', 'w4', 'w5', 'w6'].map(addPool)));
    expect(outcome.warnings).toHaveLength(4);
  });

  it('cuts a warning to under 256 characters', () => {
    const longName = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}`;
    const outcome = run(pod({ required: [{}] }), rules(addPool(longName)));
    expect(outcome.warnings[0]!.length).toBeLessThan(256);
    expect(outcome.warnings[0]).toMatch(/…$/);
  });
});

describe('a second review of a Pod the webhook mutated', () => {
  const gen = (value: string) => req('example.com/gen', 'In', value);

  it('reaches the canonical form on removal that a later AND would reach, so the second review changes nothing', () => {
    const ruleSet = rules(
      rule('add-pool', { priority: 0, mutationAdd: { nodeAffinity: required(termOf(pool('new'))) } }),
      rule('drop-gen', { priority: 1, mutationRemove: { nodeAffinity: { keys: ['example.com/gen'] } } }),
    );
    const first = run(pod({ required: [termOf(zone('a')), termOf(gen('x'))] }), ruleSet);
    expect(requiredTerms(first.pod)).toEqual([termOf(pool('new'))]);

    const second = run(first.pod, ruleSet);

    expect(second.patch).toEqual([]);
  });

  it('keeps the applied rules of the first review in the annotation when the second matches fewer', async () => {
    const examples = compileRuleSet((await loadRuleFiles([EXAMPLES])).rules);
    const frontend = pod({
      labels: { app: 'web', 'app.kubernetes.io/component': 'frontend', 'pod-template-hash': '5d8f7c9b4' },
      required: [termOf(req('example.com/node-pool', 'In', 'legacy'))],
    });
    const first = run(frontend, examples);
    expect(first.pod.metadata?.annotations?.[APPLIED_ANNOTATION]).toBe('migrate-legacy-pool,prefer-arm64-web');

    const second = run(first.pod, examples);

    expect(second.applied).toEqual(['prefer-arm64-web']);
    expect(second.patch).toEqual([]);
  });

  it('appends newly applied rules to the names already recorded, keeping their order', () => {
    const input = pod({ annotations: { [APPLIED_ANNOTATION]: 'older,b-rule' } });
    const ruleSet = rules(
      rule('a-rule', { mutationAdd: { annotations: { 'example.com/a': 'x' } } }),
      rule('b-rule', { mutationAdd: { annotations: { 'example.com/b': 'y' } } }),
    );

    const outcome = run(input, ruleSet);

    expect(outcome.applied).toEqual(['a-rule', 'b-rule']);
    expect(outcome.pod.metadata?.annotations?.[APPLIED_ANNOTATION]).toBe('older,b-rule,a-rule');
  });

  it("keeps a required selector that equals the Pod's own as sets, in the Pod's own order and spelling", () => {
    const input = pod({ required: [termOf(zone('b', 'a'), pool('x')), termOf(arch('arm64'), pool('x'))] });
    const outcome = run(input, rules(rule('r', { mutationAdd: { nodeAffinity: required(termOf(pool('x'))) } })));
    expect(outcome.pod.spec?.affinity).toBe(input.spec?.affinity);
  });
});
