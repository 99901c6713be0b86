import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { createClient } from '../api/client.ts';
import { DEFAULT_RETRY_POLICY } from '../api/retry-policy.ts';
import { parseApiUrl } from '../config/api-url.ts';
import { resolveSettings, SETTING_FLAG_OPTIONS, type Settings } from '../config/settings.ts';
import { readToken } from '../config/token.ts';
import { renderMarkdown } from '../core/render-markdown.ts';
import { renderText } from '../core/render-text.ts';
import { hasErrors, hasPendingChanges, type RunReport } from '../core/report.ts';
import { reconcile } from '../engine/reconcile.ts';
import { StateStore } from '../engine/state.ts';
import { ConfigError } from '../errors.ts';
import { createLogger, redactingStream } from '../log.ts';
import { loadManifests, type ManifestSet } from '../manifests/load.ts';
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

${SHARED_FLAGS_HELP}`,
  sync: `Usage: envsync sync [--dry-run] [flags]

Plans, applies (PUT with retries), verifies and records every org of the manifests.

  --dry-run                plan only, never write (the same as "envsync plan")
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
function reportValidation(ctx: CommandContext, settings: Settings, manifests: ManifestSet): number {
  const selected = manifests.orgs.filter(
    (o) => settings.orgs === undefined || settings.orgs.includes(o.org),
  );
  const problems = [...manifests.unattributed, ...selected.flatMap((o) => o.problems)];
  const environments = selected.reduce((n, o) => n + o.environments.length, 0);
  const invalidOrgs = selected.filter((o) => o.problems.length > 0).length;
  if (settings.output === 'json') {
    const strip = ({ org: _org, ...problem }: (typeof problems)[number]) => problem;
    ctx.stdout.write(
      `${JSON.stringify(
        {
          version: 1,
          valid: problems.length === 0,
          summary: {
            files: manifests.fileCount,
            orgs: selected.length,
            environments,
            invalidOrgs,
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
  } else {
    const lines = problems.map(formatProblem);
    const verdict =
      problems.length === 0
        ? `valid: ${manifests.fileCount} file(s), ${selected.length} org(s), ${environments} environment(s)`
        : `invalid: ${problems.length} problem(s); ${invalidOrgs} org(s) would be left alone; ${selected.length - invalidOrgs} org(s) valid`;
    if (settings.output === 'markdown') {
      ctx.stdout.write(
        `### envsync validate\n\n${verdict}\n${lines.length ? `\n${lines.map((l) => `- \`${l.replace(/`/g, "'")}\``).join('\n')}\n` : ''}`,
      );
    } else {
      ctx.stdout.write(`${lines.length ? `${lines.join('\n')}\n` : ''}${verdict}\n`);
    }
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

/** `envsync validate`, `envsync plan`, `envsync sync [--dry-run]`. */
export async function runOneShot(ctx: CommandContext, mode: OneShotMode): Promise<number> {
  const { values } = parseFlags(
    ctx.argv,
    {
      ...SETTING_FLAG_OPTIONS,
      help: { type: 'boolean', short: 'h' },
      ...(mode === 'sync' ? { 'dry-run': { type: 'boolean' } } : {}),
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

  const manifests = await loadManifestTree(settings, ctx.cwd);
  warnAboutUnknownOrgs(settings, manifests, logger);
  if (mode === 'validate') return reportValidation(out, settings, manifests);

  const dryRun = mode === 'plan' || values['dry-run'] === true;
  if (settings.apiUrl === undefined) {
    throw new ConfigError('no API address: pass --api-url URL or set ENVSYNC_API_URL');
  }
  const apiUrl = parseApiUrl(settings.apiUrl, { insecureHttp: settings.insecureHttp });
  token = await readToken(settings.tokenFile, ctx.env);
  const ca =
    settings.caFile === undefined
      ? undefined
      : await readFile(settings.caFile, 'utf8').catch((error: unknown) => {
          throw new ConfigError(
            `--ca-file ${settings.caFile}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
          );
        });
  const state = await StateStore.load(path.resolve(ctx.cwd, settings.state), logger, apiUrl.href);
  const currentToken = token;
  const client = createClient({
    apiUrl,
    getToken: () => currentToken,
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    policy: {
      ...DEFAULT_RETRY_POLICY,
      retries: settings.retries,
      minDelayMs: settings.retryDelayMs,
    },
    logger,
    clock: {
      now: () => Date.now(),
      sleep: (ms, signal) => sleep(ms, undefined, signal ? { signal } : {}),
    },
    ca,
  });
  const started = Date.now();
  let report: RunReport;
  try {
    report = await reconcile({
      manifests,
      client,
      state,
      logger,
      dryRun,
      orgs: settings.orgs === undefined ? undefined : new Set(settings.orgs),
    });
  } finally {
    await client.close();
  }
  logger.info(
    { ...report.summary, durationMs: Date.now() - started, dryRun },
    `${dryRun ? 'plan' : 'sync'} finished`,
  );
  stdout.write(renderReport(report, settings, ctx));
  if (hasErrors(report)) return 1;
  if (dryRun && settings.detailedExitcode && hasPendingChanges(report)) return 2;
  return 0;
}
