/** The report against a capacity: where each workload's Pods would fit once rolled out, and the Pods each rule strands. */
import { describe, expect, it } from 'vitest';
import { Capacity } from '../../lib/capacity/index.ts';
import type { RuleSet } from '../../lib/engine/index.ts';
import { createReport, type MigrationReport } from '../../lib/report/index.ts';
import { validatePodMutation } from '../../lib/api/index.ts';
import { podMutation, rule, rules } from '../support/builders.ts';
import { node, nodePool } from '../capacity/support.ts';
import { clusterList, fixtureRules, type KubectlList } from './support.ts';
import { IF_UNSCHEDULABLE_ANNOTATION } from '../../lib/api/constants.ts';
import { type ReportOptions } from '../../lib/report/builder.ts';

const POOL_KEY = 'example.com/node-pool';
const LEGACY_NODES = [
  node('legacy-1', { [POOL_KEY]: 'legacy', 'kubernetes.io/arch': 'amd64' }),
  node('legacy-2', { [POOL_KEY]: 'legacy', 'kubernetes.io/arch': 'amd64' }),
];
// The migration's target: Karpenter's NodePool "merged", whose Nodes carry example.com/node-pool=merged.
const MERGED_POOL = nodePool('merged', {}, { labels: { [POOL_KEY]: 'merged' } });

/** Folds a List as the CLI does: every owner, then every Pod. */
function fold(list: KubectlList, ruleSet: RuleSet, options: ReportOptions): MigrationReport {
  const builder = createReport(ruleSet, options);
  list.items.forEach((item, index) => item.kind !== 'Pod' && builder.addOwner(item, `items[${index}]`));
  list.items.forEach((item, index) => item.kind === 'Pod' && builder.addPod(item, `items[${index}]`));
  return builder.result();
}

function fitOf(report: MigrationReport, name: string) {
  return report.workloads.find((item) => item.name === name)?.fit;
}

function unschedulableOf(report: MigrationReport, rule: string) {
  return report.rules.find((item) => item.name === rule)?.unschedulable;
}

describe('the report against a capacity', () => {
  it('says where a workload fits once its Pods are recreated: the NodePool the rule targets', async () => {
    const capacity = Capacity.of({ nodes: LEGACY_NODES, nodePools: [MERGED_POOL] });
    const report = fold(await clusterList(), await fixtureRules(), { capacity });

    expect(fitOf(report, 'web')).toEqual({ kind: 'fits', reason: 'fits NodePool merged; 0 Nodes' });
    expect(unschedulableOf(report, 'migrate-legacy-pool')).toBe(0);
  });

  it('says a workload fits nowhere when no Node and no NodePool takes its mutated Pods, naming the closest', async () => {
    const report = fold(await clusterList(), await fixtureRules(), { capacity: Capacity.of({ nodes: LEGACY_NODES }) });

    expect(fitOf(report, 'web')?.kind).toBe('nowhere');
    expect(fitOf(report, 'web')?.reason).toMatch(
      /^fits nowhere: no Node and no NodePool takes it; closest: Node legacy-1/,
    );
  });

  it('counts on a rule the Pods it matched that fit before it and fit nowhere after it, current ones too', async () => {
    const report = fold(await clusterList(), await fixtureRules(), { capacity: Capacity.of({ nodes: LEGACY_NODES }) });

    // checkout's 2 Pods (current), web's 2 and storefront's 1 (pending): all fitted the legacy Nodes as their templates ask.
    expect(unschedulableOf(report, 'migrate-legacy-pool')).toBe(5);
  });

  it('does not count a Pod that fitted nowhere before the rule either, though it fits nowhere after it', async () => {
    const report = fold(await clusterList(), await fixtureRules(), { capacity: Capacity.of({ nodes: LEGACY_NODES }) });

    // nightly-report asks for the batch-ondemand pool, which has no Node here: the rule did not strand it.
    expect(fitOf(report, 'nightly-report')?.kind).toBe('nowhere');
    expect(unschedulableOf(report, 'batch-to-spot-pool')).toBe(0);
  });

  it('counts no Pod on an audited rule, which changes none', async () => {
    const report = fold(await clusterList(), await fixtureRules(), {
      capacity: Capacity.of({ nodes: LEGACY_NODES }),
      enforcement: 'audit',
    });

    expect(report.rules.map((item) => item.unschedulable)).toEqual(report.rules.map(() => 0));
  });

  it('judges nothing but contradictions without a capacity: a fitting change is "not judged"', async () => {
    const report = fold(await clusterList(), await fixtureRules(), {});

    expect(fitOf(report, 'web')).toEqual({ kind: 'unknown', reason: 'not judged: no capacity given' });
    expect(unschedulableOf(report, 'migrate-legacy-pool')).toBe(0);
  });

  it("finds without a capacity a rule that contradicts the Pods' own placement, and counts them", async () => {
    // web requires example.com/node-pool In [legacy]; a nodeSelector for merged, its affinity kept, holds on no node.
    const ruleSet = rules(
      rule('select-merged', {
        workloadSelector: { namespaces: ['production'], names: ['web'] },
        mutationAdd: { nodeSelector: { [POOL_KEY]: 'merged' } },
      }),
    );
    const report = fold(await clusterList(), ruleSet, {});

    expect(fitOf(report, 'web')?.kind).toBe('nowhere');
    expect(fitOf(report, 'web')?.reason).toMatch(
      /^fits nowhere: its nodeSelector and required node affinity cannot hold/,
    );
    expect(unschedulableOf(report, 'select-merged')).toBe(2);
  });

  it('leaves out the fit of a workload whose Pods are denied: none is created', async () => {
    const report = fold(await clusterList(), await fixtureRules(), { capacity: Capacity.of({ nodes: LEGACY_NODES }) });

    expect(report.workloads.find((item) => item.name === 'ledger')).not.toHaveProperty('fit');
  });

  it('counts on a rule held back by if-unschedulable: skip the Pods it would have stranded, which stay as they are', async () => {
    const held = validatePodMutation({
      ...podMutation('move-web-or-skip', {
        workloadSelector: { namespaces: ['production'], names: ['web'] },
        mutationRemove: { nodeAffinity: { keys: [POOL_KEY] } },
        mutationAdd: { nodeSelector: { [POOL_KEY]: 'mergd' } },
      }),
      metadata: { name: 'move-web-or-skip', annotations: { [IF_UNSCHEDULABLE_ANNOTATION]: 'skip' } },
    });
    if (!held.valid) throw new Error('the held rule is invalid');
    const capacity = Capacity.of({ nodes: LEGACY_NODES, nodePools: [MERGED_POOL] });
    const report = fold(await clusterList(), rules(held.rule), { capacity });

    expect(report.rules).toEqual([
      { name: 'move-web-or-skip', enforcement: 'enforce', matched: 2, current: 0, pending: 0, unschedulable: 2 },
    ]);
    expect(report.workloads.find((item) => item.name === 'web')).toBeUndefined();
  });
});
