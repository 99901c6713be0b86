import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { readCaFile } from '../config/ca-file.ts';
import { parseApiUrl } from '../config/api-url.ts';
import { resolveSettings, SETTING_FLAG_OPTIONS, type Settings } from '../config/settings.ts';
import { readToken } from '../config/token.ts';
import { renderMarkdown } from '../core/render-markdown.ts';
import { renderText } from '../core/render-text.ts';
import { problemAnnotations, runAnnotations } from '../core/annotations.ts';
import type { ObservedEnvironment, OrgPlan } from '../core/model.ts';
import {
  hasErrors,
  hasPendingChanges,
  REPORT_VERSION,
  summarize,
  type RunReport,
} from '../core/report.ts';
import { applyOrgPlan, type ApplyProgress } from '../engine/reconcile.ts';
import type { SavedPlan } from '../engine/saved-plan.ts';
import type * as FromSettings from '../api/from-settings.ts';
import { writeFileAtomic } from '../engine/files.ts';
import {
  annotationsWanted,
  appendSummary,
  repoPathMapper,
  repositoryRoot,
  writeAnnotations,
} from './ci.ts';
import { terminalProgress } from './progress.ts';
import { reconcile } from '../engine/reconcile.ts';
import { StateStore } from '../engine/state-store.ts';
import { ConfigError, UsageError } from '../errors.ts';
import { createLogger, redactingStream } from '../log.ts';
import { loadManifests, type ManifestSet, type OrgManifest } from '../manifests/load.ts';
import { formatProblem } from '../manifests/parse.ts';
import { parseFlags } from './args.ts';
import type { CommandContext } from './context.ts';

export type OneShotMode = 'validate' | 'plan' | 'sync';

const SHARED_FLAGS_HELP = `Flags:
  --manifests DIR          manifests root (env ENVSYNC_MANIFESTS, default ./manifests)
  --api-url URL            the API's base address (env ENVSYNC_API_URL); https unless loopback
  --org ORG                only this org; repeatable (env ENVSYNC_ORGS, comma-separated)
  --concurrency N          requests in flight at once, GETs and PUTs together (default 8)
  --retries N              retries per request after the first attempt (default 4)
  --timeout DURATION       per request (default 30s)
  --retry-delay DURATION   first backoff delay, doubling up to 30s (default 1s)
  --state FILE             state file (env ENVSYNC_STATE, default .envsync/state.json)
  --token-file PATH        read the token from PATH (env ENVSYNC_TOKEN_FILE); else ENVSYNC_TOKEN
  --ca-file PATH           extra CA certificates (PEM) to trust for https
  --insecure-http          allow plain http:// to a non-loopback host
  --max-file-bytes N       largest manifest file read (default 1048576)
  -o, --output FORMAT      text | json | markdown (default text)
  --detailed-exitcode      exit 2 when there is no error and changes are pending (plan, --dry-run)
  --log-level LEVEL        trace | debug | info | warn | error | fatal | silent (default info)
  -c, --config FILE        YAML config file (see config/envsync.example.yaml)
  --annotations MODE       github | none: print each problem as a GitHub workflow command
                           (default github when GITHUB_ACTIONS=true)
  --summary-file PATH      append the markdown report to PATH (default $GITHUB_STEP_SUMMARY)
  -h, --help               show this help

Precedence: flags > environment > config file > defaults.
Exit codes: 0 success; 1 error (invalid manifests, failed org or change, not converged);
            2 changes pending (only with --detailed-exitcode, plan or sync --dry-run).`;

const USAGE: Record<OneShotMode, string> = {
  validate: `Usage: envsync validate [flags]

Reads and validates every manifest, offline (no token, no request).

${SHARED_FLAGS_HELP}`,
  plan: `Usage: envsync plan [flags]

Shows what sync would change. The same as "envsync sync --dry-run": it never writes to the API.

  --out FILE               save the plan, bound to the live listing it was computed from, for
                           "envsync sync --plan FILE"

${SHARED_FLAGS_HELP}`,
  sync: `Usage: envsync sync [--dry-run] [flags]

Plans, applies (PUT with retries), verifies and records every org of the manifests.

  --dry-run                plan only, never write (the same as "envsync plan"); with --out FILE
                           the plan is saved
  --plan FILE              apply exactly the plan saved by "envsync plan --out FILE", and only if
                           every org's live listing is still the one it was computed from
${SHARED_FLAGS_HELP}`,
};

/** Loads the manifests, turning a missing root into a clear configuration error. */
export async function loadManifestTree(settings: Settings, cwd: string): Promise<ManifestSet> {
  try {
    return await loadManifests({
      root: settings.manifests,
      cwd,
      maxFileBytes: settings.maxFileBytes,
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ConfigError(
        `manifests directory ${path.resolve(cwd, settings.manifests)} does not exist; pass --manifests DIR or set ENVSYNC_MANIFESTS`,
      );
    }
    throw error;
  }
}

function warnAboutUnknownOrgs(settings: Settings, manifests: ManifestSet, logger: Logger): void {
  for (const org of settings.orgs ?? []) {
    if (!manifests.orgs.some((o) => o.org === org)) {
      logger.warn({ org }, `--org ${org}: no manifest declares this org; nothing to do for it`);
    }
  }
}

/** Renders the validate result and returns the exit code. */
type Problem = ManifestSet['unattributed'][number];

/** The one-line verdict of a validation. */
function validationVerdict(
  manifests: ManifestSet,
  selected: readonly OrgManifest[],
  problems: readonly Problem[],
): string {
  const environments = selected.reduce((n, o) => n + o.environments.length, 0);
  const invalidOrgs = selected.filter((o) => o.problems.length > 0).length;
  return problems.length === 0
    ? `valid: ${manifests.fileCount} file(s), ${selected.length} org(s), ${environments} environment(s)`
    : `invalid: ${problems.length} problem(s); ${invalidOrgs} org(s) would be left alone; ${selected.length - invalidOrgs} org(s) valid`;
}

/** A validation as markdown, for `--output markdown` and the step summary. */
function validationMarkdown(
  manifests: ManifestSet,
  selected: readonly OrgManifest[],
  problems: readonly Problem[],
): string {
  const lines = problems.map((p) => `- \`${formatProblem(p).replace(/`/g, "'")}\``);
  return `### envsync validate\n\n${problems.length === 0 ? '✅' : '❌'} ${validationVerdict(manifests, selected, problems)}\n${lines.length ? `\n${lines.join('\n')}\n` : ''}`;
}

/** Renders the validate result and returns the exit code. */
function reportValidation(ctx: CommandContext, settings: Settings, manifests: ManifestSet): number {
  const selected = manifests.orgs.filter(
    (o) => settings.orgs === undefined || settings.orgs.includes(o.org),
  );
  const problems = [...manifests.unattributed, ...selected.flatMap((o) => o.problems)];
  if (settings.output === 'json') {
    const strip = ({ org: _org, ...problem }: Problem) => problem;
    ctx.stdout.write(
      `${JSON.stringify(
        {
          version: 1,
          valid: problems.length === 0,
          summary: {
            files: manifests.fileCount,
            orgs: selected.length,
            environments: selected.reduce((n, o) => n + o.environments.length, 0),
            invalidOrgs: selected.filter((o) => o.problems.length > 0).length,
            errors: problems.length,
          },
          orgs: selected.map((o) => ({
            org: o.org,
            status: o.problems.length > 0 ? 'invalid' : 'ok',
            environments: o.environments.length,
            files: o.files,
            errors: o.problems.map(strip),
          })),
          errors: manifests.unattributed.map(strip),
        },
        null,
        2,
      )}\n`,
    );
  } else if (settings.output === 'markdown') {
    ctx.stdout.write(validationMarkdown(manifests, selected, problems));
  } else {
    const lines = problems.map(formatProblem);
    ctx.stdout.write(
      `${lines.length ? `${lines.join('\n')}\n` : ''}${validationVerdict(manifests, selected, problems)}\n`,
    );
  }
  return problems.length > 0 ? 1 : 0;
}

function renderReport(report: RunReport, settings: Settings, ctx: CommandContext): string {
  switch (settings.output) {
    case 'json':
      return `${JSON.stringify(report, null, 2)}\n`;
    case 'markdown':
      return renderMarkdown(report);
    default:
      return renderText(report, { color: Boolean(ctx.stdout.isTTY) && !('NO_COLOR' in ctx.env) });
  }
}

/** Loaded on demand, not at the top: validate never talks to the API and need not load undici. */
let clientModulePromise: Promise<typeof FromSettings> | undefined;
function clientModule(): Promise<typeof FromSettings> {
  clientModulePromise ??= import('../api/from-settings.ts');
  return clientModulePromise;
}

/** Everything a command needs to talk to the API, from the settings. */
export async function connect(
  settings: Settings,
  ctx: CommandContext,
  logger: Logger,
  setToken: (token: string) => void,
  progress?: ApplyProgress,
) {
  if (settings.apiUrl === undefined) {
    throw new ConfigError('no API address: pass --api-url URL or set ENVSYNC_API_URL');
  }
  const apiUrl = parseApiUrl(settings.apiUrl, { insecureHttp: settings.insecureHttp });
  const token = await readToken(settings.tokenFile, ctx.env);
  setToken(token);
  const ca = await readCaFile(settings.caFile);
  const state = await StateStore.load(path.resolve(ctx.cwd, settings.state), logger, apiUrl.href);
  const { clientFromSettings } = await clientModule();
  const client = clientFromSettings(settings, { apiUrl, getToken: () => token, logger, ca });
  return { apiUrl, client, state, progress };
}

const CI_FLAGS = {
  annotations: { type: 'string' },
  'summary-file': { type: 'string' },
} as const;

/** Annotations (GitHub workflow commands) and the step summary, as the flags and env ask. */
async function emitCiOutputs(
  ctx: CommandContext,
  out: { stdout: CommandContext['stdout']; stderr: CommandContext['stderr'] },
  settings: Settings,
  flags: { annotations?: string | undefined; 'summary-file'?: string | undefined },
  annotate: (toRepoPath: (file: string) => string) => string[],
  markdown: () => string,
): Promise<void> {
  if (flags.annotations !== undefined && !['github', 'none'].includes(flags.annotations)) {
    throw new UsageError(`--annotations: "${flags.annotations}" is not one of github, none`);
  }
  if (annotationsWanted(flags.annotations, ctx.env)) {
    const root = await repositoryRoot(ctx.cwd, ctx.env);
    writeAnnotations(
      annotate(repoPathMapper(ctx.cwd, root)),
      settings.output,
      out.stdout,
      out.stderr,
    );
  }
  const summaryFile = flags['summary-file'] ?? (ctx.env['GITHUB_STEP_SUMMARY'] || undefined);
  if (summaryFile !== undefined) {
    await appendSummary(path.resolve(ctx.cwd, summaryFile), markdown()).catch((error: unknown) => {
      throw new ConfigError(
        `--summary-file ${summaryFile}: cannot be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      );
    });
  }
}

/** `sync --plan FILE`: applies exactly a saved plan, only if the live listings did not move. */
async function applySaved(
  ctx: CommandContext,
  settings: Settings,
  file: string,
  logger: Logger,
  api: Awaited<ReturnType<typeof connect>>,
): Promise<RunReport> {
  const { describeMove, listingDigest, orgPlanFromSaved, readSavedPlan } =
    await import('../engine/saved-plan.ts');
  let saved: SavedPlan;
  try {
    saved = readSavedPlan(JSON.parse(await readFile(path.resolve(ctx.cwd, file), 'utf8')));
  } catch (error) {
    throw new ConfigError(`--plan ${file}: cannot be used: ${(error as Error).message}`);
  }
  if (saved.api !== api.apiUrl.href) {
    throw new ConfigError(
      `--plan ${file}: it was made against ${saved.api}, not ${api.apiUrl.href}`,
    );
  }
  // Every org's listing must still be the one the plan was computed from: check them all first.
  const moved: string[] = [];
  await Promise.all(
    saved.orgs.map(async (org) => {
      let live;
      try {
        live = await api.client.listEnvironments(org.org);
      } catch (error) {
        moved.push(`org ${org.org}: cannot list it to check (${(error as Error).message})`);
        return;
      }
      if (listingDigest(live) !== org.digest) {
        moved.push(
          `org ${org.org}: ${describeMove(org, live).join('; ') || 'the listing changed'}`,
        );
      }
    }),
  );
  if (moved.length > 0) {
    throw new PlanMovedError(
      `refusing to apply ${file}: the service moved since the plan was made, so it is not the plan that was reviewed:\n` +
        moved
          .sort()
          .map((line) => `  ${line}`)
          .join('\n') +
        '\nRun "envsync plan" again and review the new plan.',
    );
  }
  const reports = await Promise.all(
    saved.orgs.map(
      async (org) => (await applyOrgPlan(orgPlanFromSaved(org), { ...api, logger })).report,
    ),
  );
  logger.info({ plan: file, orgs: saved.orgs.length }, 'applied the saved plan');
  return {
    version: REPORT_VERSION,
    dryRun: false,
    summary: summarize(reports),
    orgs: reports,
    errors: [],
  };
}

/** The live service no longer matches a saved plan: exit 1, nothing applied. */
class PlanMovedError extends ConfigError {
  override name = 'PlanMovedError';
}

/** `envsync validate`, `envsync plan`, `envsync sync [--dry-run]`. */
export async function runOneShot(ctx: CommandContext, mode: OneShotMode): Promise<number> {
  const { values } = parseFlags(
    ctx.argv,
    {
      ...SETTING_FLAG_OPTIONS,
      ...CI_FLAGS,
      help: { type: 'boolean', short: 'h' },
      ...(mode === 'validate' ? {} : { out: { type: 'string' } }),
      ...(mode === 'sync' ? { 'dry-run': { type: 'boolean' }, plan: { type: 'string' } } : {}),
    },
    USAGE[mode],
  );
  if (values.help) {
    ctx.stdout.write(`${USAGE[mode]}\n`);
    return 0;
  }
  const settings = await resolveSettings(values, ctx.env, ctx.cwd);
  let token: string | undefined;
  const stdout = redactingStream(ctx.stdout, () => (token === undefined ? [] : [token]));
  const stderr = redactingStream(ctx.stderr, () => (token === undefined ? [] : [token]));
  const out = { ...ctx, stdout, stderr };
  const logger = createLogger(settings.logLevel, stderr, { command: mode });
  const dryRun = mode === 'plan' || values['dry-run'] === true;
  const outFile = 'out' in values ? (values.out as string | undefined) : undefined;
  const planFile = 'plan' in values ? (values.plan as string | undefined) : undefined;
  if (outFile !== undefined && !dryRun) {
    throw new UsageError(
      '--out saves a plan: use it with "envsync plan" or "envsync sync --dry-run"',
    );
  }
  if (planFile !== undefined && dryRun) {
    throw new UsageError(
      '--plan applies a saved plan: use it with "envsync sync", without --dry-run',
    );
  }
  const printReport = async (report: RunReport) => {
    stdout.write(renderReport(report, settings, ctx));
    await emitCiOutputs(
      ctx,
      out,
      settings,
      values,
      (map) => runAnnotations(report, map),
      () => renderMarkdown(report),
    );
  };

  if (planFile !== undefined) {
    const progress = terminalProgress(stderr);
    const api = await connect(settings, ctx, logger, (t) => (token = t), progress);
    let report: RunReport;
    try {
      report = await applySaved(ctx, settings, planFile, logger, api);
    } finally {
      progress.finish();
      await api.client.close();
    }
    await printReport(report);
    return hasErrors(report) ? 1 : 0;
  }

  // Phase timings at debug level: where a slow run spends its time (see README, Performance).
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return Math.round((user + system) / 1000);
  };
  const phase = (what: string, fields: () => Record<string, unknown> = () => ({})) => {
    if (!logger.isLevelEnabled('debug')) return;
    logger.debug(
      {
        ...fields(),
        atMs: Math.round(performance.now()),
        cpuMs: cpuMs(),
        rssMb: Math.round(process.memoryUsage.rss() / 1e6),
      },
      what,
    );
  };
  phase('reading the manifests');
  // The HTTP client's modules load while the manifests are read (their file reads overlap).
  if (mode !== 'validate') void clientModule().catch(() => undefined);
  const manifests = await loadManifestTree(settings, ctx.cwd);
  phase('manifests read', () => ({
    files: manifests.fileCount,
    orgs: manifests.orgs.length,
    environments: manifests.orgs.reduce((n, org) => n + org.environments.length, 0),
  }));
  warnAboutUnknownOrgs(settings, manifests, logger);
  if (mode === 'validate') {
    const code = reportValidation(out, settings, manifests);
    const selected = manifests.orgs.filter(
      (o) => settings.orgs === undefined || settings.orgs.includes(o.org),
    );
    const problems = [...manifests.unattributed, ...selected.flatMap((o) => o.problems)];
    await emitCiOutputs(
      ctx,
      out,
      settings,
      values,
      (map) => problemAnnotations(problems, map),
      () => validationMarkdown(manifests, selected, problems),
    );
    return code;
  }

  const progress = terminalProgress(stderr);
  const api = await connect(
    settings,
    ctx,
    logger,
    (t) => (token = t),
    dryRun ? undefined : progress,
  );
  phase('state loaded, client ready');
  const planned = new Map<string, { observed: readonly ObservedEnvironment[]; plan: OrgPlan }>();
  const started = Date.now();
  let report: RunReport;
  try {
    report = await reconcile({
      manifests,
      client: api.client,
      state: api.state,
      logger,
      dryRun,
      orgs: settings.orgs === undefined ? undefined : new Set(settings.orgs),
      progress: api.progress,
      // Listings are kept only to save a plan: at 100,000 environments they weigh.
      onPlanned:
        outFile === undefined
          ? undefined
          : (org, observed, plan) => planned.set(org, { observed, plan }),
    });
  } finally {
    progress.finish();
    await api.client.close();
  }
  logger.info(
    { ...report.summary, durationMs: Date.now() - started, dryRun },
    `${dryRun ? 'plan' : 'sync'} finished`,
  );
  if (outFile !== undefined) {
    const { savePlan } = await import('../engine/saved-plan.ts');
    const saved = savePlan(api.apiUrl.href, new Date().toISOString(), planned, report);
    await writeFileAtomic(path.resolve(ctx.cwd, outFile), `${JSON.stringify(saved, null, 2)}\n`);
    logger.info({ out: outFile, orgs: saved.orgs.length }, `plan saved to ${outFile}`);
  }
  phase('orgs reconciled');
  await printReport(report);
  if (hasErrors(report)) return 1;
  if (dryRun && settings.detailedExitcode && hasPendingChanges(report)) return 2;
  return 0;
}
