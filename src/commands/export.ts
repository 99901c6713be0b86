import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { resolveSettings, SETTING_FLAG_OPTIONS } from '../config/settings.ts';
import { ConfigError, UsageError } from '../errors.ts';
import { createLogger, redactingStream } from '../log.ts';
import { renderExportedManifest } from '../manifests/export.ts';
import { NAME_PATTERN } from '../core/names.ts';
import { parseFlags } from './args.ts';
import type { CommandContext } from './context.ts';
import { connect } from './one-shot.ts';

const {
  manifests: _manifests,
  output: _output,
  'detailed-exitcode': _detailed,
  'max-file-bytes': _max,
  state: _state,
  ...SHARED
} = SETTING_FLAG_OPTIONS;

const USAGE = `Usage: envsync export --org ORG [--org ORG...] [--out DIR] [--force]

Writes each org's environments, as the API lists them, as a manifest that "envsync validate"
accepts: a way in for teams whose environments already exist. A round trip (export, then plan)
shows nothing to create or update.

  --org ORG          an org to export; repeatable (required)
  --out DIR          write DIR/<org>.yaml for each org (default: all to stdout, as YAML documents)
  --force            overwrite files that already exist in DIR
  --api-url URL  --token-file PATH  --ca-file PATH  --insecure-http  --concurrency N  --retries N
  --timeout DURATION  --retry-delay DURATION  --log-level LEVEL  -c, --config FILE
  -h, --help         show this help`;

/** `envsync export`: the live listing as manifests. */
export async function exportCommand(ctx: CommandContext): Promise<number> {
  const { values } = parseFlags(
    ctx.argv,
    {
      ...SHARED,
      out: { type: 'string' },
      force: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  if (values.help) {
    ctx.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const settings = await resolveSettings(values, ctx.env, ctx.cwd);
  const orgs = [...new Set(settings.orgs ?? [])];
  if (orgs.length === 0)
    throw new UsageError('--org ORG is required (repeat it for several orgs)', USAGE);
  const bad = orgs.find((org) => !NAME_PATTERN.test(org));
  if (bad !== undefined)
    throw new UsageError(`--org: ${JSON.stringify(bad)} is not a valid org name`);

  let token: string | undefined;
  const stdout = redactingStream(ctx.stdout, () => (token === undefined ? [] : [token]));
  const stderr = redactingStream(ctx.stderr, () => (token === undefined ? [] : [token]));
  const logger = createLogger(settings.logLevel, stderr, { command: 'export' });
  const outDir = values.out === undefined ? undefined : path.resolve(ctx.cwd, values.out);
  if (outDir !== undefined && values.force !== true) {
    for (const org of orgs) {
      const file = path.join(outDir, `${org}.yaml`);
      if (await stat(file).catch(() => undefined)) {
        throw new ConfigError(`${file} already exists; pass --force to overwrite it`);
      }
    }
  }
  const api = await connect(settings, ctx, logger, (t) => (token = t));
  let results: (
    | { org: string; text: string; error?: undefined }
    | { org: string; text?: undefined; error: string }
  )[];
  try {
    results = await Promise.all(
      orgs.map(async (org) => {
        try {
          return {
            org,
            text: renderExportedManifest(
              org,
              await api.client.listEnvironments(org),
              api.apiUrl.origin,
            ),
          };
        } catch (error) {
          return { org, error: (error as Error).message };
        }
      }),
    );
  } finally {
    await api.client.close();
  }

  let failed = 0;
  for (const result of results) {
    if (result.error !== undefined) {
      failed++;
      stderr.write(`envsync export: org ${result.org}: ${result.error}\n`);
    }
  }
  const exported = results.filter((r): r is { org: string; text: string } => r.text !== undefined);
  if (outDir === undefined) {
    stdout.write(exported.map((r) => r.text).join('---\n'));
  } else {
    await mkdir(outDir, { recursive: true });
    for (const { org, text } of exported) {
      await writeFile(path.join(outDir, `${org}.yaml`), text);
      logger.info({ org, file: path.join(outDir, `${org}.yaml`) }, `exported ${org}`);
    }
  }
  return failed > 0 ? 1 : 0;
}
