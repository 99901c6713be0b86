import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The test files that take longest, by their wall time on this machine, longest first. Vitest
 * orders by the durations it cached on earlier runs; a fresh clone has none and falls back to file
 * size, which started the longest file late and left one worker busy long after the others.
 */
const SLOW_FIRST = [
  'test/reliability/fail-fast.test.ts',
  'test/sync/sync.test.ts',
  'test/reliability/faults.test.ts',
  'test/daemon/run-cli.test.ts',
  'test/reliability/properties.test.ts',
  'test/hostile/fifo.test.ts',
  'test/reliability/network.test.ts',
  'test/emulator/robustness.test.ts',
  'test/ci/output.test.ts',
  'test/hostile/token-echo.test.ts',
  'test/reliability/hostile.test.ts',
  'test/reliability/state-safety.test.ts',
  'test/daemon/daemon.test.ts',
  'test/daemon/settle.test.ts',
  'test/install/node-check.test.ts',
  'test/emulator/cli.test.ts',
  'test/reliability/deadline.test.ts',
  'test/notify/notify-daemon.test.ts',
  'test/generate/generated-files.test.ts',
  'test/daemon/shutdown.test.ts',
  'test/daemon/transport.test.ts',
  'test/ci/ci.test.ts',
];

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const index = SLOW_FIRST.findIndex((file) => spec.moduleId.endsWith(file));
      return index === -1 ? SLOW_FIRST.length : index;
    };
    return sorted
      .map((spec, order) => ({ spec, order }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.order - b.order)
      .map(({ spec }) => spec);
  }
}
