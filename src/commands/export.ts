import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseCommandFlags, shortUsage } from '../config/flags.ts';
import { resolveValues } from '../config/resolve.ts';
import { resolveSettings } from '../config/settings.ts';
import { SETTINGS } from '../config/settings-table.ts';
import { pickSettings } from '../config/setting.ts';
import { ConfigError, UsageError, errorMessage } from '../errors.ts';
import { renderExportedManifest } from '../manifests/export.ts';
import { NAME_PATTERN } from '../core/names.ts';
import { connect } from './connect.ts';
import type { CommandContext } from './context.ts';
import { commandIo, help } from './io.ts';

const EXPORT_SETTINGS = pickSettings(SETTINGS, ['exportOut', 'force']);

type Exported = { org: string; text: string; error?: undefined };
type Failed = { org: string; text?: undefined; error: string };

/** `envsync export`: the live listing as manifests. */
export async function exportCommand(ctx: CommandContext): Promise<number> {
  const flags = await parseCommandFlags(SETTINGS, 'export', ctx.argv);
  if (flags.help === true) return (await help()).printHelp(ctx, 'export');
  const settings = await resolveSettings(flags, ctx.env, ctx.cwd);
  const { exportOut, force } = resolveValues(EXPORT_SETTINGS, { flags, env: ctx.env });
  const orgs = [...new Set(settings.orgs ?? [])];
  if (orgs.length === 0) {
    throw new UsageError(
      '--org ORG is required (repeat it for several orgs)',
      shortUsage('export'),
    );
  }
  const bad = orgs.find((org) => !NAME_PATTERN.test(org));
  if (bad !== undefined) {
    throw new UsageError(`--org: ${JSON.stringify(bad)} is not a valid org name`);
  }

  const io = commandIo(ctx, settings.logLevel, 'export');
  const outDir = exportOut === undefined ? undefined : path.resolve(ctx.cwd, exportOut);
  if (outDir !== undefined && !force) {
    for (const org of orgs) {
      const file = path.join(outDir, `${org}.yaml`);
      if (await stat(file).catch(() => undefined)) {
        throw new ConfigError(`${file} already exists; pass --force to overwrite it`);
      }
    }
  }
  const api = await connect(settings, ctx.env, io.logger, io.addSecret);
  let results: (Exported | Failed)[];
  try {
    results = await Promise.all(
      orgs.map(async (org): Promise<Exported | Failed> => {
        try {
          const listing = await api.client.listEnvironments(org);
          return { org, text: renderExportedManifest(org, listing, api.apiUrl.origin) };
        } catch (error) {
          return { org, error: errorMessage(error) };
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
      io.stderr.write(`envsync export: org ${result.org}: ${result.error}\n`);
    }
  }
  const exported = results.filter((r): r is Exported => r.text !== undefined);
  if (outDir === undefined) {
    io.stdout.write(exported.map((r) => r.text).join('---\n'));
  } else {
    await mkdir(outDir, { recursive: true });
    for (const { org, text } of exported) {
      const file = path.join(outDir, `${org}.yaml`);
      await writeFile(file, text);
      io.logger.info({ org, file }, `exported ${org}`);
    }
  }
  return failed > 0 ? 1 : 0;
}
