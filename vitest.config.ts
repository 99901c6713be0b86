import { defineConfig } from 'vitest/config';

/**
 * Tests of the pure modules: no server, no child process, no file system. `npm run test:unit`
 * runs only these; `npm test` runs everything.
 */
const UNIT = [
  'test/core/**/*.test.ts',
  'test/manifests/accept.test.ts',
  'test/manifests/parse.test.ts',
  'test/api/listing.test.ts',
  'test/api/policy.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests start real servers and child processes and mostly wait on them: three
    // workers keep two cores busy.
    maxWorkers: 3,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: UNIT },
      },
    ],
  },
});
