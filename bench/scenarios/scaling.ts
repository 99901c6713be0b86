/**
 * The no-op plan's scaling curve: the same plan over trees of every size, its cost per org, and
 * whether it grows linearly.
 */
import type { BenchEmulator } from '../lib/emulator.ts';
import { type BenchConfig, mb, type Workload } from '../lib/context.ts';
import { median } from '../lib/proc.ts';
import { fmt } from '../lib/report.ts';
import { plan } from './noop.ts';

/** The no-op plan at every size; `measured` is the no-op scenario's, reused at its own size. */
export async function scaling(
  c: BenchConfig,
  w: Workload,
  emulator: BenchEmulator,
  measured: { wallMs: number; peakRssMb: number; requests: number },
) {
  const points: {
    orgs: number;
    environments: number;
    requests: number;
    wallMs: number;
    peakRssMb: number;
    msPerOrg: number;
  }[] = [];
  for (const size of c.sizes) {
    let wallMs: number;
    let peakRssMb: number;
    let requests: number;
    if (size === c.orgs) {
      ({ wallMs, peakRssMb, requests } = measured);
    } else {
      const runs = [];
      for (let i = 0; i < c.reps; i++) runs.push(await plan(c, w, emulator, size));
      wallMs = median(runs.map((r) => r.run.wallMs));
      peakRssMb = Math.max(...runs.map((r) => mb(r.run.peakRssBytes)));
      requests = runs[0]?.requests.total ?? Number.NaN;
    }
    points.push({
      orgs: size,
      environments: size * c.envs,
      requests,
      wallMs,
      peakRssMb,
      msPerOrg: wallMs / size,
    });
  }
  // The cost of each further org between consecutive sizes (the process start-up cancels out).
  const marginal = points.slice(1).map((p, i) => {
    const q = points[i] as (typeof points)[number];
    return {
      from: q.orgs,
      to: p.orgs,
      msPerOrg: (p.wallMs - q.wallMs) / (p.orgs - q.orgs),
      kbPerOrg: ((p.peakRssMb - q.peakRssMb) * 1000) / (p.orgs - q.orgs),
    };
  });
  // Linear when the last segment's cost per org is within 1.5x of the one before it (time and
  // memory), i.e. no super-linear term shows between 1,000 and 3,000 orgs.
  const last = marginal.at(-1);
  const previous = marginal.at(-2);
  const timeGrowth = last && previous ? last.msPerOrg / previous.msPerOrg : Number.NaN;
  const memoryGrowth =
    last && previous ? last.kbPerOrg / Math.max(previous.kbPerOrg, 1e-9) : Number.NaN;
  const linear =
    !(timeGrowth > 1.5) && !(memoryGrowth > 1.5) && points.every((p) => p.requests === p.orgs);
  return { points, marginal, timeGrowth, memoryGrowth, linear };
}

export type ScalingResult = Awaited<ReturnType<typeof scaling>>;

/** The scaling curve's rows of the figures table (its peak RSS is checked with the others'). */
export function scalingFigures(r: ScalingResult): string[][] {
  return [
    ...r.points.map((p) => [
      'scaling',
      `${fmt(p.orgs)} orgs`,
      `${fmt(p.wallMs)} ms, ${fmt(p.peakRssMb)} MB, ${fmt(p.msPerOrg, 3)} ms/org`,
    ]),
    ...r.marginal.map((m) => [
      'scaling',
      `marginal ${fmt(m.from)} -> ${fmt(m.to)}`,
      `${fmt(m.msPerOrg, 3)} ms/org, ${fmt(m.kbPerOrg, 1)} kB/org`,
    ]),
    ['scaling', 'growth', r.linear ? 'roughly linear' : 'NOT linear'],
  ];
}
