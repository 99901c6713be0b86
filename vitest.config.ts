import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/slow-first.ts';

/**
 * Tests of the pure modules: no server, no child process, no file system. `npm run test:unit`
 * runs only these; `npm test` runs everything.
 */
const UNIT = [
  'test/core/**/*.test.ts',
  'test/daemon/pass.test.ts',
  'test/notify/{events,format}.test.ts',
  'test/api/retry-policy.test.ts',
  'test/log/log-line.test.ts',
  'test/manifests/{parse,fast-read}.test.ts',
  'test/api/listing.test.ts',
  'test/api/gate.test.ts',
  'test/daemon/scheduler.test.ts',
  'test/daemon/page.test.ts',
];

/**
 * Suites that need the whole machine for a while, or tools `.ci/run` installs: packing and
 * installing the package, the image's steps carried out for real (an `npm ci` included), syncs
 * SIGKILLed at random moments, a tiny run of every benchmark scenario, kustomize, the Helm chart
 * (helm, and a registry on loopback) and the SBOM. `npm run test:system` runs
 * them; `.ci/run` runs them after `npm test`.
 */
const SYSTEM = ['test/system/**/*.test.ts'];

/**
 * The container image built from the Dockerfile with podman and run (root, Linux, minutes on a
 * fresh machine): `npm run test:image`, run by `.ci/run` after the system suites.
 */
const IMAGE = ['test/image/**/*.test.ts'];

/**
 * `npm test` (scripts/test.ts, which sets this variable) runs the unit and the integration files
 * as one project, `unit+integration`. A worker serves the files of one project only: as two
 * projects, the unit files, last in the order, got workers of their own, started when the
 * integration files were done (a worker start and the modules loaded again: about 2 s of CPU
 * each, for a second and a half of tests). Only then, so that `npx vitest run test/core` runs
 * each file once.
 */
const TOGETHER = process.env['ENVSYNC_TEST_TOGETHER'] === '1';
const INTEGRATION = {
  globalSetup: ['test/global-setup.ts'],
  include: ['test/**/*.test.ts'],
};

export default defineConfig({
  test: {
    // Safety nets for a loaded machine, not timings: no test asserts a duration.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests mix work (the CLI's commands run in the worker) with waits (timeouts,
    // Retry-After, rate limits, child processes): four workers keep two cores busy. Measured
    // with `npm test`, whose checks run beside the tests, back to back on a quiet machine: three
    // workers left the cores idle for a third of the time while the waiting files ran (74-78 s),
    // four did not (69-74 s, for 10% more CPU), five only added contention (78 s). Forks, not
    // threads: the tests start about a hundred and twenty child processes, and starting one costs
    // the starting process more the more memory it holds (8 ms at 50 MB, 23 ms at 650 MB); a
    // thread worker starts them from the one process that holds every worker's heap. Measured
    // with `npm test` back to back on two cores: forks took 10 to 15% less CPU than threads.
    maxWorkers: 4,
    pool: 'forks',
    // One module cache per worker, shared by the files it runs, so src/ is loaded once per worker
    // rather than once per file. No test file changes process-wide state (environment, signal
    // handlers, working directory): the CLI's one-shot commands run in the worker through
    // `main`, which takes all of that from its context (test/helpers/cli.ts fails a run that
    // leaves any of it changed); the daemon, the emulator as a process and whatever Node reads
    // from the process itself run in child processes.
    isolate: false,
    reporters: ['default'],
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      ...(TOGETHER
        ? [
            {
              extends: true,
              test: { name: 'unit+integration', ...INTEGRATION, exclude: [...SYSTEM, ...IMAGE] },
            },
          ]
        : []),
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: { name: 'integration', ...INTEGRATION, exclude: [...UNIT, ...SYSTEM, ...IMAGE] },
      },
      {
        extends: true,
        test: { name: 'system', include: SYSTEM, globalSetup: ['test/global-setup.ts'] },
      },
      { extends: true, test: { name: 'image', include: IMAGE } },
    ],
  },
});
