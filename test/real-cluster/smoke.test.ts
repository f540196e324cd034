import { describe, expect, it } from 'vitest';
import { useControlPlane } from './use-control-plane.ts';

const cluster = useControlPlane();

describe('smoke', () => {
  it('runs a deployment', async () => {
    const plane = cluster();
    const r = await plane.kubectl(['create', 'deployment', 'web', '--image=nginx', '--replicas=3']);
    expect(r.code, r.stderr).toBe(0);
    const w = await plane.kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    expect(w.code, w.stderr + w.stdout).toBe(0);
    console.log((await plane.kubectl(['get', 'pods', '-o', 'wide'])).stdout);
    console.log((await plane.kubectl(['version'])).stdout);
    expect(plane.kubeletErrors).toEqual([]);
  });
});
