import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The real control plane's scenarios need Go and run apart: npm run test:cluster (vitest.cluster.config.ts); the
    // packed install needs the registry or npm's cache: npm run test:install (vitest.install.config.ts).
    exclude: ['test/real-cluster/**', 'test/install/**', 'node_modules/**'],
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
