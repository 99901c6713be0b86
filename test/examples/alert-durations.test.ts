/**
 * An alert fires after the time its expression looks back (a range `[10m]`, or an age `time() - t
 * > 30 * 60`) plus its `for:`: the two add up. The numbers of each rule of the example
 * PrometheusRule are held to what its text says.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const RULE_FILE = new URL(
  '../../examples/kubernetes/monitoring/prometheusrule.yaml',
  import.meta.url,
);

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  annotations?: { summary?: string; description?: string };
}

const UNIT_MINUTES: Record<string, number> = {
  ms: 1 / 60_000,
  s: 1 / 60,
  m: 1,
  h: 60,
  d: 24 * 60,
  w: 7 * 24 * 60,
  y: 365 * 24 * 60,
};

/** A Prometheus duration (`30m`, `1h30m`, `90s`) in minutes; none is 0. */
function durationMinutes(duration: string | undefined): number {
  if (duration === undefined) return 0;
  const parts = [...duration.matchAll(/(\d+)(ms|[smhdwy])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== duration)
    throw new Error(`"${duration}" is not a Prometheus duration`);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * (UNIT_MINUTES[unit ?? ''] ?? 0), 0);
}

/** `text` cut at each top-level occurrence of the operator `op` (outside parentheses). */
function splitTopLevel(text: string, op: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  const word = new RegExp(`^\\s${op}\\s`);
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (depth === 0 && word.test(text.slice(i))) {
      parts.push(text.slice(start, i));
      start = i + op.length + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

/** How long one operand of an expression looks back: its longest range or age, 0 for none. */
function lookBack(operand: string): number {
  const ranges = [...operand.matchAll(/\[([^\]:]+)(?::[^\]]*)?\]/g)].map((m) =>
    durationMinutes(m[1]),
  );
  const ages = [...operand.matchAll(/[<>]=?\s*(\d+(?:\.\d+)?)\s*\*\s*60\b(?!\s*\*)/g)].map((m) =>
    Number(m[1]),
  );
  // An age written any other way (in seconds, or `* 3600`) would be read as no wait at all.
  if (operand.includes('time()') && ages.length === 0)
    throw new Error(`cannot read the age in "${operand}": write it as "> N * 60"`);
  return Math.max(0, ...ranges, ...ages);
}

/**
 * The minutes after which each way the expression can be true fires: every `or` branch on its
 * own; within a branch, `unless` only removes series, and `and` needs both sides, so the longer.
 */
function firingMinutes(rule: AlertRule): number[] {
  const wait = durationMinutes(rule.for);
  return splitTopLevel(rule.expr.trim(), 'or').map((branch) => {
    const [kept = ''] = splitTopLevel(branch, 'unless');
    return Math.max(...splitTopLevel(kept, 'and').map(lookBack)) + wait;
  });
}

/** The durations the summary and description state, in minutes ("30 minutes", "an hour"). */
function statedMinutes(rule: AlertRule): number[] {
  const text = `${rule.annotations?.summary ?? ''} ${rule.annotations?.description ?? ''}`;
  return [...text.matchAll(/\b(\d+|an?|one)\s+(minutes?|hours?)\b/gi)].map(([, n = '', unit]) => {
    const count = /^\d+$/.test(n) ? Number(n) : 1;
    return count * (unit?.toLowerCase().startsWith('hour') ? 60 : 1);
  });
}

/** What does not add up in `rule`, as sentences; empty when its timing matches its text. */
function timingProblems(rule: AlertRule): string[] {
  const stated = [...new Set(statedMinutes(rule))];
  if (stated.length !== 1)
    return [`${rule.alert} states ${stated.length} durations (${stated.join(', ')} minutes)`];
  const [says] = stated;
  return firingMinutes(rule)
    .filter((minutes) => minutes !== says)
    .map((minutes) => `${rule.alert} fires after ${minutes} minutes but says ${says}`);
}

const rules = (
  parse(readFileSync(RULE_FILE, 'utf8')) as { spec: { groups: { rules: AlertRule[] }[] } }
).spec.groups.flatMap((group) => group.rules);

describe('examples/kubernetes/monitoring/prometheusrule.yaml: alert durations', () => {
  it.each(rules.map((rule) => [rule.alert, rule] as const))(
    '%s fires after the time its summary and description state',
    (_alert, rule) => {
      expect(timingProblems(rule)).toEqual([]);
      // Something was read: the check is not passing on a rule it could not parse.
      expect(statedMinutes(rule).length).toBeGreaterThan(0);
    },
  );

  it('reads durations, ranges, ages and stated times as Prometheus and a reader would', () => {
    expect(['30m', '1h30m', '90s', undefined].map(durationMinutes)).toEqual([30, 90, 1.5, 0]);
    expect(() => durationMinutes('30 minutes')).toThrow(/not a Prometheus duration/);
    const rule = (expr: string, wait?: string): AlertRule => ({
      alert: 'A',
      expr,
      ...(wait === undefined ? {} : { for: wait }),
      annotations: { summary: 'for an hour', description: 'at least 60 minutes' },
    });
    expect(statedMinutes(rule('x'))).toEqual([60, 60]);
    expect(firingMinutes(rule('sum(increase(x[15m])) == 0', '5m'))).toEqual([20]);
    expect(firingMinutes(rule('max_over_time(x[1h:1m]) > 0'))).toEqual([60]);
    expect(firingMinutes(rule('(time() - t > 30 * 60) unless (y[5m] > 0)'))).toEqual([30]);
    expect(firingMinutes(rule('(time() - t > 10 * 60) and (z[20m] > 0)', '1m'))).toEqual([21]);
    expect(() => firingMinutes(rule('time() - t > 1800'))).toThrow(/cannot read the age/);
  });

  it('finds the hour in the EnvsyncOrgFailing that said 30 minutes (the check is real)', () => {
    // The rule as it was: its expression already waited 30 minutes, then `for:` 30 more.
    const before: AlertRule = {
      alert: 'EnvsyncOrgFailing',
      expr: `(time() - envsync_org_last_success_timestamp_seconds > 30 * 60)
or
(envsync_org_manifest_errors > 0)
`,
      for: '30m',
      annotations: {
        summary: 'envsync: org {{ $labels.org }} has not converged for 30 minutes',
        description:
          'Org {{ $labels.org }} failed its passes, or its manifests are invalid, for 30 minutes or more.',
      },
    };
    expect(timingProblems(before)).toEqual([
      'EnvsyncOrgFailing fires after 60 minutes but says 30',
    ]);
    // And the one that said 15 minutes over a 15-minute range with `for: 5m`.
    const noPass: AlertRule = {
      alert: 'EnvsyncNoSuccessfulPass',
      expr: 'sum by (namespace, pod) (increase(envsync_passes_total{result=~"success|partial"}[15m])) == 0',
      for: '5m',
      annotations: { summary: 'envsync {{ $labels.pod }}: no successful pass in 15 minutes' },
    };
    expect(timingProblems(noPass)).toEqual([
      'EnvsyncNoSuccessfulPass fires after 20 minutes but says 15',
    ]);
    // A branch with no wait of its own fires at once, whatever the other branch waits.
    expect(
      timingProblems({ ...before, expr: '(time() - t > 30 * 60) or (errors > 0)', for: '0m' }),
    ).toEqual(['EnvsyncOrgFailing fires after 0 minutes but says 30']);
    // Text that states two different times cannot be checked, and is wrong itself.
    expect(
      timingProblems({ ...before, annotations: { summary: '30 minutes', description: 'an hour' } }),
    ).toEqual(['EnvsyncOrgFailing states 2 durations (30, 60 minutes)']);
  });
});
