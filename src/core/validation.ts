/** What `envsync validate` found, as plain data, and how each output format prints it. */
import { escapeText, markdownCode } from './escape.ts';
import type { ProblemReport } from './report.ts';

interface ValidatedOrg {
  readonly org: string;
  /** Environments declared; none for an invalid org, which is left alone whole. */
  readonly environments: number;
  readonly files: readonly string[];
  readonly errors: readonly ProblemReport[];
  /** Declared keys the service retired or deprecated. */
  readonly warnings: readonly ProblemReport[];
}

export interface ValidationReport {
  /** The manifest files read (not those skipped). */
  readonly files: number;
  /** The YAML files that are not manifests, and why (an error instead with --strict). */
  readonly skipped: readonly { readonly file: string; readonly reason: string }[];
  /** The selected orgs, sorted. */
  readonly orgs: readonly ValidatedOrg[];
  /** Problems that belong to no org (unreadable files, documents without an org). */
  readonly errors: readonly ProblemReport[];
}

/** `file:line:column path: message`, as compilers write it, its untrusted parts escaped. */
export function formatProblem({ file, line, column, path, message }: ProblemReport): string {
  const where = path === '' ? '' : `${escapeText(path)}: `;
  return `${escapeText(file)}:${line}:${column} ${where}${escapeText(message)}`;
}

/** Every problem of a validation: those of no org first, then each org's. */
export function validationProblems(report: ValidationReport): ProblemReport[] {
  return [...report.errors, ...report.orgs.flatMap((o) => o.errors)];
}

function counts(report: ValidationReport) {
  return {
    problems: validationProblems(report),
    environments: report.orgs.reduce((n, o) => n + o.environments, 0),
    invalidOrgs: report.orgs.filter((o) => o.errors.length > 0).length,
  };
}

/** Why no manifest was found: nothing to read, or only other YAML (its count). */
export function noManifestReason(skipped: number): string {
  return skipped === 0
    ? 'no *.yaml or *.yml file to read'
    : `${skipped} YAML file(s) skipped, not manifests`;
}

/** The verdict says when no manifest was found, and how many files were skipped as other YAML. */
function validationVerdict(report: ValidationReport): string {
  const { problems, environments, invalidOrgs } = counts(report);
  const skipped = report.skipped.length;
  if (problems.length === 0 && report.files === 0) {
    return `valid: no manifest found: ${noManifestReason(skipped)}`;
  }
  const others = skipped === 0 ? '' : `; ${skipped} file(s) skipped, not manifests`;
  return problems.length === 0
    ? `valid: ${report.files} file(s), ${report.orgs.length} org(s), ${environments} environment(s)${others}`
    : `invalid: ${problems.length} problem(s); ${invalidOrgs} org(s) would be left alone; ${report.orgs.length - invalidOrgs} org(s) valid${others}`;
}

/** Each warning of a validation, as text. */
const warningLines = (report: ValidationReport) =>
  report.orgs.flatMap((o) => o.warnings.map((w) => `warning: ${formatProblem(w)}`));

export function validationText(report: ValidationReport): string {
  const lines = [...validationProblems(report).map(formatProblem), ...warningLines(report)];
  return `${lines.length ? `${lines.join('\n')}\n` : ''}${validationVerdict(report)}\n`;
}

export function validationMarkdown(report: ValidationReport): string {
  const problems = validationProblems(report);
  const lines = [...problems.map(formatProblem), ...warningLines(report)].map(
    (line) => `- ${markdownCode(line)}`,
  );
  return `### envsync validate\n\n${problems.length === 0 ? '✅' : '❌'} ${validationVerdict(report)}\n${lines.length ? `\n${lines.join('\n')}\n` : ''}`;
}

/** Version 1, documented in docs/cli.md. */
export function validationJson(report: ValidationReport): string {
  const { problems, environments, invalidOrgs } = counts(report);
  const document = {
    version: 1,
    valid: problems.length === 0,
    summary: {
      files: report.files,
      orgs: report.orgs.length,
      environments,
      invalidOrgs,
      errors: problems.length,
      skipped: report.skipped.length,
    },
    orgs: report.orgs.map((o) => ({
      org: o.org,
      status: o.errors.length > 0 ? 'invalid' : 'ok',
      environments: o.environments,
      files: o.files,
      errors: o.errors,
      warnings: o.warnings,
    })),
    errors: report.errors,
    skipped: report.skipped,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
