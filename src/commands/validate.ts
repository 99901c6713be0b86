import { printHelp } from './help.ts';
import { problemAnnotations } from './annotations.ts';
import { RENDERERS } from '../core/renderers.ts';
import type { ProblemReport } from '../core/report.ts';
import { validationProblems, type ValidationReport } from '../core/validation.ts';
import { parseCommandArgs, shortUsage } from '../config/flags.ts';
import { resolveValues } from '../config/resolve.ts';
import { resolveSettings } from '../config/settings.ts';
import { SETTINGS } from '../config/settings-table.ts';
import { UsageError } from '../runtime/errors.ts';
import type { ManifestProblem } from '../manifests/parse.ts';
import { CI_SETTINGS, emitCiOutputs } from './ci.ts';
import type { CommandContext } from './context.ts';
import { commandIo, wantsColor } from './io.ts';
import { checkSelectedOrgs, loadManifestTree, selectedOrgs } from './manifests.ts';
import { phaseTimer } from './timings.ts';

/** A problem as reports show it: the org it belongs to is said by where it is listed. */
const withoutOrg = ({ org: _org, ...problem }: ManifestProblem): ProblemReport => problem;

/** `envsync validate [PATH...]`: manifests only, offline; the whole tree, or the given paths. */
export async function validateCommand(ctx: CommandContext): Promise<number> {
  const { flags, positionals: paths } = await parseCommandArgs(SETTINGS, 'validate', ctx.argv);
  if (flags.help === true) return printHelp(ctx, 'validate');
  if (paths.length > 0 && flags.manifests !== undefined) {
    throw new UsageError(
      'give either PATHs or --manifests, not both (PATHs are read instead of the manifests root)',
      shortUsage('validate'),
    );
  }
  const settings = await resolveSettings(flags, ctx.env, ctx.cwd);
  const ci = resolveValues(CI_SETTINGS, { flags, env: ctx.env });
  const io = commandIo(ctx, settings, 'validate');
  const phase = phaseTimer(io.logger);
  phase('reading the manifests');
  const manifests = await loadManifestTree(
    settings,
    ctx.cwd,
    io.logger,
    paths.length > 0 ? paths : undefined,
  );
  phase('manifests read', () => ({
    files: manifests.fileCount,
    orgs: manifests.orgs.length,
    environments: manifests.orgs.reduce((n, org) => n + org.environments.length, 0),
  }));
  checkSelectedOrgs(settings, manifests);
  const report: ValidationReport = {
    files: manifests.fileCount,
    skipped: manifests.skipped,
    orgs: selectedOrgs(settings, manifests).map((o) => ({
      org: o.org,
      environments: o.environments.length,
      files: o.files,
      errors: o.problems.map(withoutOrg),
    })),
    errors: manifests.unattributed.map(withoutOrg),
  };
  io.stdout.write(RENDERERS[settings.output].validation(report, { color: wantsColor(ctx) }));
  const problems = validationProblems(report);
  await emitCiOutputs(ctx, io, ci, settings.output, {
    annotations: (toRepoPath) => problemAnnotations(problems, toRepoPath),
    markdown: () => RENDERERS.markdown.validation(report, { color: false }),
  });
  return problems.length > 0 ? 1 : 0;
}
