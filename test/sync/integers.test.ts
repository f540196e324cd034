/**
 * A PodMutation from the cluster whose tolerationSeconds is int64's maximum: listed with its digits (the list is read
 * raw, never through JSON.parse), accepted, published and read back from the table with them.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../lib/json/index.ts';
import { syncSubject, useSyncWorld } from './support.ts';

const world = useSyncWorld();
const INT64_MAX = '9223372036854775807';

describe('a PodMutation whose tolerationSeconds is beyond 2^53', () => {
  it('is accepted, and published and read back from the table with every digit', async () => {
    // The API server's answer as text: a JSON value cannot hold the digits, the text can.
    const item = `{"apiVersion":"agent.cloudpilot.ai/v1alpha1","kind":"PodMutation","metadata":{"name":"drain-tolerant","generation":1,"resourceVersion":"7"},"spec":{"enable":true,"workloadSelector":{"namespaces":["production"]},"mutationAdd":{"tolerations":[{"key":"example.com/drain","operator":"Exists","effect":"NoExecute","tolerationSeconds":${INT64_MAX}}]}}}`;
    world.server.fail(
      {
        kind: 'raw',
        body: `{"apiVersion":"agent.cloudpilot.ai/v1alpha1","kind":"PodMutationList","metadata":{"resourceVersion":"7"},"items":[${item}]}`,
      },
      { on: 'list', resource: 'podmutations', times: 1 },
    );
    const subject = syncSubject(world);

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', resources: 1, valid: 1, invalid: 0 });
    const snapshot = await world.store(subject.clusterId).read();
    expect(canonicalJson(snapshot?.rules[0]?.mutationAdd.tolerations)).toContain(`"tolerationSeconds":${INT64_MAX}`);
  });
});
