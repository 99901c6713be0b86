import { applySavedPlan } from '../engine/apply-saved.ts';
import { printHelp } from './help.ts';
import { resolveSettings, type Settings } from '../config/settings.ts';
import { parseCommandFlags } from '../config/flags.ts';
import { resolveValues } from '../config/resolve.ts';
import { SETTINGS } from '../config/settings-table.ts';
import { pickSettings } from '../config/setting.ts';
import { exitCode, type RunReport } from '../core/report.ts';
import { stateOf, waitingWords, windowReport, windowState } from '../core/windows.ts';
import { UsageError } from '../runtime/errors.ts';
import { CI_SETTINGS, type CiOptions } from './ci.ts';
import type { CommandContext } from './context.ts';
import { commandIo } from './io.ts';
import { gitSyncRevision } from '../manifests/revision.ts';
import { loadManifestTree } from './manifests.ts';
import { printRunReport, runPass, withApi } from './pass.ts';

const SYNC_SETTINGS = {
  ...CI_SETTINGS,
  ...pickSettings(SETTINGS, ['dryRun', 'planOut', 'planFile', 'ignoreWindows']),
};

/** `envsync sync [--dry-run | --plan FILE]`: plan, apply, verify, record. */
export async function syncCommand(ctx: CommandContext): Promise<number> {
  const flags = await parseCommandFlags(SETTINGS, 'sync', ctx.argv);
  if (flags.help === true) return printHelp(ctx, 'sync');
  if (flags.observe === true) {
    throw new UsageError(
      '--observe is for "envsync run" (a daemon that never writes); sync always sends what it plans: ' +
        'to see drift and pending changes without writing, run "envsync plan" (with --detailed-exitcode in CI)',
    );
  }
  const settings = await resolveSettings(flags, ctx.env, ctx.cwd);
  const { dryRun, planOut, planFile, ignoreWindows, ...ci } = resolveValues(SYNC_SETTINGS, {
    flags,
    env: ctx.env,
  });
  if (planOut !== undefined && !dryRun) {
    throw new UsageError(
      '--out saves a plan: use it with "envsync plan" or "envsync sync --dry-run"',
    );
  }
  if (planFile !== undefined && dryRun) {
    throw new UsageError(
      '--plan applies a saved plan: use it with "envsync sync", without --dry-run',
    );
  }
  const window = dryRun ? undefined : windowCheck(ctx, settings, ignoreWindows);
  if (window !== undefined && !window.open) {
    // Outside the windows: the pass plans, and the report says why nothing was sent.
    if (planFile !== undefined) {
      throw new UsageError(
        `--plan: ${waitingWords(stateOf(window))}; nothing was sent. Apply the plan inside a window, or pass --ignore-windows`,
      );
    }
    return runPass(ctx, settings, { command: 'sync', dryRun: true, outFile: planOut, ci, window });
  }
  if (planFile !== undefined) return applySaved(ctx, settings, ci, planFile);
  return runPass(ctx, settings, { command: 'sync', dryRun, outFile: planOut, ci, window });
}

/**
 * Whether the sync windows (`--sync-window`) let this sync send now; undefined without windows.
 * `--ignore-windows` sends anyway, and says so on stderr.
 */
function windowCheck(
  ctx: CommandContext,
  settings: Settings,
  ignore: boolean,
): NonNullable<RunReport['window']> | undefined {
  const windows = settings.syncWindows ?? [];
  if (windows.length === 0) return undefined;
  const state = windowState(windows, (ctx.now ?? Date.now)());
  const window = windowReport(state, ignore);
  if (!state.open) {
    const { logger } = commandIo(ctx, settings, 'sync');
    if (ignore) {
      logger.warn(
        { window },
        `outside the sync windows (${waitingWords(state)}); --ignore-windows: sending anyway`,
      );
      return { ...window, open: true };
    }
    logger.warn(
      { window },
      `outside the sync windows: nothing is sent, the changes are planned only; ${waitingWords(state)}. --ignore-windows sends anyway`,
    );
  }
  return window;
}

/** `sync --plan FILE`: the saved plan, applied as it was reviewed or not at all. */
async function applySaved(
  ctx: CommandContext,
  settings: Settings,
  ci: CiOptions,
  file: string,
): Promise<number> {
  const io = commandIo(ctx, settings, 'sync');
  // The plan applies only with the manifests it was made from: they are read first, then compared.
  const manifests = await loadManifestTree(settings, ctx.cwd, io.logger);
  const revision = await gitSyncRevision(settings.manifests, ctx.cwd);
  const report = await withApi(ctx, settings, io, async ({ apiUrl, client }, state, progress) => {
    return applySavedPlan({
      file,
      cwd: ctx.cwd,
      apiUrl,
      client,
      state,
      logger: io.logger,
      manifests,
      manifestsDir: settings.manifests,
      progress,
      changesReported: true,
      revision,
      readTimeoutMs: settings.deadlineMs,
    });
  });
  await printRunReport(ctx, io, settings, ci, report);
  return exitCode(report, { detailed: settings.detailedExitcode });
}
