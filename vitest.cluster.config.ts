import { defineConfig } from 'vitest/config';

// npm run test:cluster: the scenarios against a real control plane (test/real-cluster). One file at a time: each starts
// its own etcd, API server, controller manager and scheduler, which together keep both cores of the build machine busy.
export default defineConfig({
  test: {
    include: ['test/real-cluster/**/*.test.ts'],
    globalSetup: ['./test/real-cluster/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
