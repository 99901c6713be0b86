/** `envsync validate` over the full tree: wall time and peak RSS, no service involved. */
import { type BenchConfig, childEnv, expectOk, mb, TARGET, type Workload } from '../lib/context.ts';
import { envsyncCommand, measure, type Measured, median } from '../lib/proc.ts';
import { check, type Check, fmt } from '../lib/report.ts';

/** Runs `envsync validate` `reps` times and reports the median wall time and the peak RSS. */
export async function validate(c: BenchConfig, w: Workload) {
  const runs: Measured[] = [];
  for (let i = 0; i < c.reps; i++) {
    const run = await measure(envsyncCommand(['validate', '--manifests', w.tree]), {
      env: childEnv,
      cwd: w.work,
    });
    expectOk('envsync validate', run);
    // A fast validate that read the wrong tree would be no figure at all.
    if (!run.stdout.includes(`${c.orgs} org(s), ${c.orgs * c.envs} environment(s)`)) {
      throw new Error(`envsync validate said: ${run.stdout}`);
    }
    runs.push(run);
  }
  return {
    environments: c.orgs * c.envs,
    wallMs: median(runs.map((r) => r.wallMs)),
    wallMsRuns: runs.map((r) => r.wallMs),
    peakRssMb: Math.max(...runs.map((r) => mb(r.peakRssBytes))),
  };
}

export type ValidateResult = Awaited<ReturnType<typeof validate>>;

/** The validate scenario's checks (its peak RSS is checked with the others'). */
export function validateChecks(c: BenchConfig, r: ValidateResult): Check[] {
  return [
    check(
      'validate.time',
      'validate',
      `wall time, ${fmt(c.orgs * c.envs)} envs`,
      r.wallMs,
      'ms',
      '<=',
      TARGET.validateMs,
    ),
  ];
}

/** The validate scenario's rows of the figures table. */
export function validateFigures(r: ValidateResult): string[][] {
  return [['validate', 'wall time', `${fmt(r.wallMs)} ms`]];
}
