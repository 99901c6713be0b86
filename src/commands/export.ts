import { printHelp } from './help.ts';
import path from 'node:path';
import { parseCommandFlags, shortUsage } from '../config/flags.ts';
import { resolveValues } from '../config/resolve.ts';
import { resolveSettings } from '../config/settings.ts';
import { SETTINGS } from '../config/settings-table.ts';
import { pickSettings } from '../config/setting.ts';
import { ApiError, failureOf } from '../api/errors.ts';
import { commonFailure, failureCause, type FailureCause, someNames } from '../core/report.ts';
import * as crypto from 'node:crypto';
import * as fsPromises from 'node:fs/promises';
import { ConfigError, errorMessage, UsageError } from '../runtime/errors.ts';
import { type ExportedManifest, renderExportedManifest } from '../manifests/export.ts';
import {
  exportNameProblems,
  policyFolder,
  policyTargets,
  preparePolicyFolders,
} from './export-policies.ts';
import { NAME_PATTERN } from '../core/names.ts';
import { connect } from './connect.ts';
import type { CommandContext } from './context.ts';
import { commandIo } from './io.ts';
import { writeFileSynced } from '../runtime/write-file.ts';

const EXPORT_SETTINGS = pickSettings(SETTINGS, ['exportOut', 'force']);

type Exported = { org: string; error?: undefined; cause?: undefined } & ExportedManifest;
type Failed = { org: string; text?: undefined; error: string; cause?: FailureCause | undefined };

/** What is at `file`, without following a symbolic link there; undefined when nothing is. */
async function entryAt(file: string): Promise<'link' | 'other' | undefined> {
  const found = await fsPromises.lstat(file).catch(() => undefined);
  return found === undefined ? undefined : found.isSymbolicLink() ? 'link' : 'other';
}

function existsMessage(file: string, kind: 'link' | 'other'): string {
  return kind === 'link'
    ? `${file} is a symbolic link (export never writes through one); remove it, or pass --force to replace the link itself with the file`
    : `${file} already exists; pass --force to overwrite it`;
}

/**
 * Writes one exported file without ever following a symbolic link at its path (a dangling link
 * would otherwise create a file wherever it points): the text goes to a new temp file in the same
 * folder, created exclusively (O_EXCL: a link planted at its name makes the open fail, never write
 * through), then takes the file's name. With `force`, a rename replaces whatever is there, a link
 * itself rather than its target; without, a hard link gives the name only if it is still free, so
 * a file that appears after the check is not overwritten either. The temp file's name is short
 * whatever the file's: a name that fits fits with it.
 */
async function writeExportFile(file: string, text: string, force: boolean): Promise<void> {
  const temp = path.join(
    path.dirname(file),
    `.envsync-export.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`,
  );
  await writeFileSynced(temp, text, { exclusive: true, mode: 0o644 });
  try {
    if (force) {
      await fsPromises.rename(temp, file);
      return;
    }
    try {
      await fsPromises.link(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      throw new ConfigError(existsMessage(file, (await entryAt(file)) ?? 'other'));
    }
  } finally {
    await fsPromises.unlink(temp).catch(() => undefined);
  }
}

/** `envsync export`: the live listing as manifests. */
export async function exportCommand(ctx: CommandContext): Promise<number> {
  const flags = await parseCommandFlags(SETTINGS, 'export', ctx.argv);
  if (flags.help === true) return printHelp(ctx, 'export');
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

  const io = commandIo(ctx, settings, 'export');
  const outDir = exportOut === undefined ? undefined : path.resolve(ctx.cwd, exportOut);
  if (outDir !== undefined && !force) {
    for (const org of orgs) {
      const file = path.join(outDir, `${org}.yaml`);
      const kind = await entryAt(file);
      if (kind !== undefined) throw new ConfigError(existsMessage(file, kind));
    }
  }
  const api = await connect(settings, ctx, io.logger, io.secrets);
  let results: (Exported | Failed)[];
  try {
    results = await Promise.all(
      orgs.map(async (org): Promise<Exported | Failed> => {
        try {
          const listing = await api.client.listEnvironments(org);
          // Known after the listing: a field this dialect cannot send is not written, and
          // policy documents exist only in kosli's.
          const dialect = api.client.dialect()?.dialect ?? 'contract';
          const policies =
            dialect === 'kosli'
              ? {
                  documents: await api.client.listPolicyDocuments(org),
                  fileOf:
                    outDir === undefined
                      ? undefined
                      : (name: string) => `${policyFolder(org)}/${name}.yaml`,
                }
              : undefined;
          const rendered = renderExportedManifest(
            org,
            listing,
            api.apiUrl.origin,
            dialect,
            policies,
            (text) => io.secrets.holds(text),
          );
          return { org, ...rendered };
        } catch (error) {
          // An org the service does not know is the export's "names nothing": say what to check.
          const unknown =
            error instanceof ApiError && error.status === 404
              ? `; the service knows no organization "${org}": check the name given to --org (and --api-url)`
              : '';
          return {
            org,
            error: `${errorMessage(error)}${unknown}`,
            cause: failureCause(failureOf(error)),
          };
        }
      }),
    );
  } finally {
    await api.client.close();
  }

  let failed = 0;
  // Every org failed for one cause: said once, with what to check; each org's error at debug.
  const failure = commonFailure(
    results.map((r) => ({
      org: r.org,
      status: r.error === undefined ? 'ok' : 'failed',
      cause: r.cause,
    })),
  );
  if (failure !== undefined) {
    io.stderr.write(
      `envsync export: ${failure.message}. ${failure.hint}${failure.orgs.length > 1 ? ` (orgs: ${someNames(failure.orgs)})` : ''}\n`,
    );
  }
  for (const result of results) {
    if (result.error !== undefined) {
      failed++;
      if (failure === undefined)
        io.stderr.write(`envsync export: org ${result.org}: ${result.error}\n`);
      else io.logger.debug({ org: result.org }, `org ${result.org}: ${result.error}`);
    }
  }
  const exported = results.filter((r): r is Exported => r.text !== undefined);
  const unseen = [...new Set(exported.flatMap((r) => r.unseen))];
  if (unseen.length > 0) {
    io.stderr.write(
      `envsync export: the listing does not show ${unseen.join(', ')} (org ${exported
        .filter((r) => r.unseen.length > 0)
        .map((r) => r.org)
        .join(
          ', ',
        )}): left out of the manifests where unseen, so sync leaves ${unseen.length === 1 ? 'it' : 'them'} as the service holds ${unseen.length === 1 ? 'it' : 'them'}; declare ${unseen.length === 1 ? 'it' : 'them'} to manage ${unseen.length === 1 ? 'it' : 'them'}.\n`,
    );
  }
  for (const { org, secretsLeftOut } of exported) {
    if (secretsLeftOut.length > 0)
      io.stderr.write(
        `envsync export: org ${org}: left out, as they hold a secret envsync holds (a token), so that no manifest sends it back masked: ${secretsLeftOut.join('; ')}; write them by hand\n`,
      );
  }
  if (outDir === undefined) {
    const withPolicies = exported.filter((r) => r.policiesLeftOut.length > 0).map((r) => r.org);
    if (withPolicies.length > 0) {
      io.stderr.write(
        `envsync export: ${withPolicies.length === 1 ? 'org' : 'orgs'} ${withPolicies.join(', ')} ${withPolicies.length === 1 ? 'has' : 'have'} policy documents; a manifest names each one's file, so they are exported only with --out DIR (they are listed in a comment)\n`,
      );
    }
    io.stdout.write(exported.map((r) => r.text).join('---\n'));
  } else {
    // Every name is checked before anything is made: a refusal leaves nothing half done.
    const problems = exportNameProblems(exported);
    if (problems.length > 0) {
      throw new ConfigError(
        `--out ${outDir}: nothing was written: ${problems.length === 1 ? 'a file name' : `${problems.length} file names`} cannot be used\n${problems.map((problem) => `  ${problem}`).join('\n')}`,
      );
    }
    await fsPromises.mkdir(outDir, { recursive: true }).catch(async (error: unknown) => {
      const kind = await entryAt(outDir);
      throw new ConfigError(
        `--out ${outDir}: cannot create the folder (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)})` +
          (kind === 'link'
            ? ': it is a symbolic link that leads nowhere; remove it, or point --out at a folder'
            : kind === 'other'
              ? ': something that is not a folder is there; --out names a folder'
              : ''),
      );
    });
    // Every policy file is checked before any file is written: a refusal leaves nothing half done.
    const targets = policyTargets(outDir, exported);
    if (!force) {
      for (const { file } of targets) {
        const kind = await entryAt(file);
        if (kind !== undefined) throw new ConfigError(existsMessage(file, kind));
      }
    }
    await preparePolicyFolders(outDir, exported);
    for (const { org, text } of exported) {
      const file = path.join(outDir, `${org}.yaml`);
      await writeExportFile(file, io.secrets.mask(text), force);
      io.logger.info({ org, file }, `exported ${org}`);
    }
    for (const { org, file, text } of targets) {
      await writeExportFile(file, io.secrets.mask(text), force);
      io.logger.info({ org, file }, `exported a policy document of ${org}`);
    }
  }
  return failed > 0 ? 1 : 0;
}
