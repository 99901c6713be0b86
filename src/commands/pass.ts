/** The pipeline plan and sync share: manifests, connection, state, reconcile, report. */
import path from 'node:path';
import type { Logger } from 'pino';
import { text } from '../config/parsers.ts';
import type { SettingsTable } from '../config/setting.ts';
import { SETTINGS, type Settings } from '../config/settings.ts';
import { maskDeep } from '../core/mask.ts';
import { RENDERERS } from '../core/renderers.ts';
import { exitCode, type RunReport } from '../core/report.ts';
import { reconcile, type ApplyProgress } from '../engine/reconcile.ts';
import { planFileText, savePlan, unsavable, type PlannedOrg } from '../engine/saved-plan.ts';
import { gitSyncRevision } from '../manifests/revision.ts';
import { ConfigError } from '../runtime/errors.ts';
import { tuneV8ForWork } from '../runtime/v8-flags.ts';
import { writeFileAtomic } from '../state/files.ts';
import { StateStore } from '../state/store.ts';
import { CI_SETTINGS, emitCiOutputs, runAnnotations, type CiOptions } from './ci.ts';
import { connect, type Connection } from './connect.ts';
import { commandLogger, phaseTimer, wantsColor, type CommandContext } from './context.ts';
import { checkSelectedOrgs, loadManifestTree } from './manifests.ts';
import { terminalProgress } from './progress.ts';

/** The flags of plan and sync beside the shared ones: the CI outputs, where to save the plan. */
export const PASS_SETTINGS = {
  ...CI_SETTINGS,
  planOut: {
    flag: '--out FILE',
    commands: ['plan', 'sync'],
    group: 'plan',
    help: 'save the plan, bound to the live listing it was computed from, for "envsync sync --plan FILE" (sync: with --dry-run)',
    parse: text,
  },
} as const satisfies SettingsTable;

/** Runs `run` with a client, the state file and a progress line, closed whatever happens. */
export async function withApi<T>(
  ctx: CommandContext,
  settings: Settings,
  logger: Logger,
  run: (api: Connection, state: StateStore, progress: ApplyProgress) => Promise<T>,
): Promise<T> {
  const progress = terminalProgress(ctx.stderr);
  const api = await connect(settings, ctx, logger);
  try {
    const file = path.resolve(ctx.cwd, settings.state);
    const state = await StateStore.load(file, logger, api.apiUrl.href, {
      secrets: ctx.secrets,
      lockTimeoutMs: settings.stateLockTimeoutMs,
      announceCreation: settings.state === SETTINGS.state.default,
      readTimeoutMs: settings.deadlineMs,
    });
    return await run(api, state, progress);
  } finally {
    progress.finish();
    await api.client.close();
  }
}

/**
 * Prints a run's report, then the CI outputs; returns the exit code. The report is masked before
 * it is rendered: markdown escapes `_`, `+`, `~`, and the streams could no longer find a secret.
 */
export async function printRunReport(
  ctx: CommandContext,
  settings: Settings,
  ci: CiOptions,
  report: RunReport,
): Promise<number> {
  const shown = maskDeep(report, ctx.secrets.mask);
  ctx.stdout.write(RENDERERS[settings.output].run(shown, { color: wantsColor(ctx) }));
  await emitCiOutputs(ctx, ci, settings.output, {
    annotations: (toRepoPath) => runAnnotations(shown, toRepoPath),
    markdown: () => RENDERERS.markdown.run(shown, { color: false }),
  });
  return exitCode(report, { detailed: settings.detailedExitcode });
}

/**
 * What sets plan, sync and sync --dry-run apart: `dryRun` never PUTs nor writes the state; a sync
 * outside its sync `window` is planned only, and the report says why.
 */
interface PassOptions {
  readonly command: 'plan' | 'sync';
  readonly dryRun: boolean;
  readonly outFile: string | undefined;
  readonly ci: CiOptions;
  readonly window?: RunReport['window'];
}

/** One pass over the manifests, as `plan` or `sync` asks; returns the exit code. */
export async function runPass(
  ctx: CommandContext,
  settings: Settings,
  { command, dryRun, outFile, ci, window }: PassOptions,
): Promise<number> {
  const logger = commandLogger(ctx, settings, command);
  const phase = phaseTimer(logger);
  tuneV8ForWork(); // before the manifests fill the heap
  const manifests = await loadManifestTree(settings, ctx.cwd, logger);
  checkSelectedOrgs(settings, manifests);
  const revision = await gitSyncRevision(settings.manifests, ctx.cwd);

  const planned = new Map<string, PlannedOrg>();
  const started = Date.now();
  const { apiUrl, report } = await withApi(ctx, settings, logger, async (api, state, progress) => {
    phase('state loaded, client ready');
    const reported = await reconcile({
      manifests,
      client: api.client,
      state,
      logger,
      dryRun,
      strict: settings.strict,
      // `plan` alone asks about archived names: a sync must not double its requests.
      askArchived: command === 'plan',
      revision,
      maxArchive: settings.maxArchive,
      orgs: settings.orgs === undefined ? undefined : new Set(settings.orgs),
      progress: dryRun ? undefined : progress,
      // The report on stdout lists every change: a log line each would say it twice.
      changesReported: true,
      // Nothing reads the manifests after the pass: each org's is let go once it is done.
      releaseDone: true,
      // Listings are kept only to save a plan.
      onPlanned:
        outFile === undefined
          ? undefined
          : (org, observed, plan, documents) => planned.set(org, { observed, plan, documents }),
    });
    return {
      apiUrl: api.apiUrl,
      report: window === undefined ? reported : { ...reported, window },
    };
  });
  logger.debug(
    { ...report.summary, durationMs: Date.now() - started, dryRun },
    `${dryRun ? 'plan' : 'sync'} finished`,
  );
  // What sync --plan would send, with a secret in it, could only be saved masked: not saved.
  let unsaved: string[] = [];
  if (outFile !== undefined) {
    const saved = savePlan(apiUrl.href, new Date().toISOString(), planned, report);
    unsaved = unsavable(saved, ctx.secrets);
    if (unsaved.length === 0) {
      await writeFileAtomic(path.resolve(ctx.cwd, outFile), planFileText(saved, ctx.secrets.mask));
      logger.info({ out: outFile, orgs: saved.orgs.length }, `plan saved to ${outFile}`);
    }
  }
  phase('orgs reconciled');
  const code = await printRunReport(ctx, settings, ci, report);
  if (unsaved.length > 0) {
    throw new ConfigError(
      `--out ${outFile}: the plan was not saved: what it sends for ${unsaved.join('; ')} holds a secret envsync holds (a token), which a plan file could hold only masked, and "sync --plan" would send the masked value; apply the plan with "envsync sync", or change the value on the service first`,
    );
  }
  return code;
}
