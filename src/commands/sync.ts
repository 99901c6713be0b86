import { applySavedPlan } from '../engine/apply-saved.ts';
import { bool, text } from '../config/parsers.ts';
import { resolveValues, type Flags, type SettingsTable } from '../config/setting.ts';
import { DAEMON_SETTINGS } from '../config/daemon-settings.ts';
import { resolveSettings, type Settings } from '../config/settings.ts';
import type { RunReport } from '../core/report.ts';
import { waitingWords, windowReport, windowState } from '../core/windows.ts';
import { gitSyncRevision } from '../manifests/revision.ts';
import { UsageError } from '../runtime/errors.ts';
import type { CiOptions } from './ci.ts';
import { commandLogger, type CommandContext } from './context.ts';
import { loadManifestTree } from './manifests.ts';
import { PASS_SETTINGS, printRunReport, runPass, withApi } from './pass.ts';

const PLAN = { commands: ['sync'], group: 'plan' } as const;

export const settings = {
  ...PASS_SETTINGS,
  dryRun: {
    flag: '--dry-run',
    ...PLAN,
    help: 'plan only, never write (the same as "envsync plan")',
    parse: bool,
    default: false,
  },
  ignoreWindows: {
    flag: '--ignore-windows',
    ...PLAN,
    help: 'send the changes even outside the sync windows (--sync-window); the run logs that it did',
    parse: bool,
    default: false,
  },
  planFile: {
    flag: '--plan FILE',
    ...PLAN,
    help: 'apply exactly the plan saved by "envsync plan --out FILE", or nothing: refused if the file was edited, does not match the manifests, or an org\'s live listing moved',
    parse: text,
  },
  observe: DAEMON_SETTINGS.observe,
} as const satisfies SettingsTable;

/** `envsync sync [--dry-run | --plan FILE]`: plan, apply, verify, record. */
export async function run(ctx: CommandContext, flags: Flags): Promise<number> {
  if (flags['observe'] === true) {
    throw new UsageError(
      '--observe is for "envsync run" (a daemon that never writes); sync always sends what it plans: ' +
        'to see drift and pending changes without writing, run "envsync plan" (with --detailed-exitcode in CI)',
    );
  }
  const resolved = await resolveSettings(flags, ctx.env, ctx.cwd);
  const values = resolveValues(settings, { flags, env: ctx.env });
  const { dryRun, planOut, planFile, ignoreWindows, ...ci } = values;
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
  const window = dryRun ? undefined : windowCheck(ctx, resolved, ignoreWindows);
  const options = { command: 'sync', dryRun, outFile: planOut, ci, window } as const;
  if (window !== undefined && !window.open) {
    // Outside the windows: the pass plans, and the report says why nothing was sent.
    if (planFile !== undefined) {
      throw new UsageError(
        `--plan: ${waitingWords(window)}; nothing was sent. Apply the plan inside a window, or pass --ignore-windows`,
      );
    }
    return runPass(ctx, resolved, { ...options, dryRun: true });
  }
  if (planFile !== undefined) return applySaved(ctx, resolved, ci, planFile);
  return runPass(ctx, resolved, options);
}

/** Whether the sync windows let this sync send now (undefined: no windows); logs why not. */
function windowCheck(
  ctx: CommandContext,
  resolved: Settings,
  ignore: boolean,
): NonNullable<RunReport['window']> | undefined {
  const windows = resolved.syncWindows ?? [];
  if (windows.length === 0) return undefined;
  const state = windowState(windows, (ctx.now ?? Date.now)());
  const window = windowReport(state, ignore);
  if (state.open) return window;
  const words = waitingWords(state);
  const said = ignore
    ? `outside the sync windows (${words}); --ignore-windows: sending anyway`
    : `outside the sync windows: nothing is sent, the changes are planned only; ${words}. --ignore-windows sends anyway`;
  commandLogger(ctx, resolved, 'sync').warn({ window }, said);
  return ignore ? { ...window, open: true } : window;
}

/** `sync --plan FILE`: the saved plan, applied as it was reviewed or not at all. */
async function applySaved(
  ctx: CommandContext,
  resolved: Settings,
  ci: CiOptions,
  file: string,
): Promise<number> {
  const logger = commandLogger(ctx, resolved, 'sync');
  // The plan applies only with the manifests it was made from: they are read first, then compared.
  const manifests = await loadManifestTree(resolved, ctx.cwd, logger);
  const revision = await gitSyncRevision(resolved.manifests, ctx.cwd);
  const report = await withApi(ctx, resolved, logger, async ({ apiUrl, client }, state, progress) =>
    applySavedPlan({
      file,
      cwd: ctx.cwd,
      apiUrl,
      client,
      state,
      logger,
      manifests,
      manifestsDir: resolved.manifests,
      progress,
      changesReported: true,
      revision,
      readTimeoutMs: resolved.deadlineMs,
    }),
  );
  return printRunReport(ctx, resolved, ci, report);
}
