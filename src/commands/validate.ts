import { resolveValues, type Flags } from '../config/setting.ts';
import { resolveSettings } from '../config/settings.ts';
import { RENDERERS } from '../core/renderers.ts';
import type { ProblemReport } from '../core/report.ts';
import { validationProblems, type ValidationReport } from '../core/validation.ts';
import { fieldWarnings, logWarnings, unsendable } from '../engine/org-problems.ts';
import type { ManifestProblem } from '../manifests/parse.ts';
import { UsageError } from '../runtime/errors.ts';
import { CI_SETTINGS, emitCiOutputs, problemAnnotations } from './ci.ts';
import { commandLogger, wantsColor, type CommandContext } from './context.ts';
import { shortUsage } from './help.ts';
import { checkSelectedOrgs, loadManifestTree, selectedOrgs } from './manifests.ts';

export const settings = CI_SETTINGS;

/** A problem as reports show it: the org it belongs to is said by where it is listed. */
const withoutOrg = ({ org: _org, ...problem }: ManifestProblem): ProblemReport => problem;

/** `envsync validate [PATH...]`: manifests only, offline; the whole tree, or the given paths. */
export async function run(
  ctx: CommandContext,
  flags: Flags,
  paths: readonly string[],
): Promise<number> {
  if (paths.length > 0 && flags['manifests'] !== undefined) {
    throw new UsageError(
      'give either PATHs or --manifests, not both (PATHs are read instead of the manifests root)',
      shortUsage('validate'),
    );
  }
  const resolved = await resolveSettings(flags, ctx.env, ctx.cwd);
  const ci = resolveValues(CI_SETTINGS, { flags, env: ctx.env });
  const logger = commandLogger(ctx, resolved, 'validate');
  const given = paths.length > 0 ? paths : undefined;
  const manifests = await loadManifestTree(resolved, ctx.cwd, logger, given);
  checkSelectedOrgs(resolved, manifests);
  // Offline, the service is taken to be the production one unless --api-dialect says contract.
  const kosli = resolved.apiDialect !== 'contract';
  const { strict } = resolved;
  const report: ValidationReport = {
    files: manifests.fileCount,
    skipped: manifests.skipped,
    orgs: selectedOrgs(resolved, manifests).map((o) => ({
      org: o.org,
      environments: o.environments.length,
      files: o.files,
      errors: [
        ...o.problems.map(withoutOrg),
        ...(kosli ? unsendable(o, { dialect: 'kosli', from: 'setting' }, manifests, strict) : []),
      ],
      warnings: kosli ? fieldWarnings(o, 'kosli', manifests, strict) : [],
    })),
    errors: manifests.unattributed.map(withoutOrg),
  };
  for (const o of report.orgs) logWarnings(logger, o.org, o.warnings);
  ctx.stdout.write(RENDERERS[resolved.output].validation(report, { color: wantsColor(ctx) }));
  const problems = validationProblems(report);
  await emitCiOutputs(ctx, ci, resolved.output, {
    annotations: (toRepoPath) => problemAnnotations(problems, toRepoPath),
    markdown: () => RENDERERS.markdown.validation(report, { color: false }),
  });
  return problems.length > 0 ? 1 : 0;
}
