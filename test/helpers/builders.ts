import type { DesiredEnvironment, ObservedEnvironment } from '../../src/core/model.ts';
import {
  type OrgReport,
  type PolicyDocumentReport,
  type ProblemReport,
  REPORT_VERSION,
  type RunReport,
  summarize,
} from '../../src/core/report.ts';

/** Builds a desired environment with sensible defaults. */
export function desired(
  name: string,
  overrides: Partial<DesiredEnvironment> = {},
): DesiredEnvironment {
  return {
    name,
    type: 'K8S',
    description: `${name} environment`,
    include_scaling: false,
    policies: [],
    ...overrides,
  };
}

/** Builds an observed environment as the kosli listing shows it (all fields carried). */
export function observedFull(
  name: string,
  overrides: Partial<ObservedEnvironment> = {},
): ObservedEnvironment {
  return { ...desired(name), ...overrides };
}

/** Builds an observed environment as the spec listing shows it (no include_scaling/policies). */
export function observedSpec(
  name: string,
  overrides: Partial<ObservedEnvironment> = {},
): ObservedEnvironment {
  return { name, type: 'K8S', description: `${name} environment`, ...overrides };
}

/** Builds an org's report: ok, with nothing in it but what `overrides` gives. */
export function orgReport(org: string, overrides: Partial<OrgReport> = {}): OrgReport {
  return { org, status: 'ok', changes: [], unchanged: [], unmanaged: [], errors: [], ...overrides };
}

/** Builds a planned update of a policy document's content (sha256 of a's to b's). */
export function uploadReport(
  name: string,
  overrides: Partial<PolicyDocumentReport> = {},
): PolicyDocumentReport {
  const [from, to] = ['a', 'b'].map((c) => `sha256:${c.repeat(64)}`) as [string, string];
  return {
    action: 'update',
    name,
    version: 3,
    fields: { content: { from, to } },
    result: 'planned',
    ...overrides,
  };
}

/** Builds a run's report of these orgs, summed up. */
export function runReport(
  dryRun: boolean,
  orgs: readonly OrgReport[],
  { errors = [], throttledMs }: { errors?: ProblemReport[]; throttledMs?: number } = {},
): RunReport {
  const summary = { ...summarize(orgs), ...(throttledMs === undefined ? {} : { throttledMs }) };
  return { version: REPORT_VERSION, dryRun, summary, orgs, errors };
}
