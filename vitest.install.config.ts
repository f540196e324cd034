import { defineConfig } from 'vitest/config';

// npm run test:install: the CLI packed with `npm pack` and installed with `npm install -g` on a Node 20 host
// (test/install). Apart from npm test: it installs Node 20 and the package from the registry (or npm's cache).
export default defineConfig({
  test: {
    include: ['test/install/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 600_000,
    pool: 'forks',
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
