/** `envsync export`: each org's environments, as the API lists them, as a manifest. */
import * as crypto from 'node:crypto';
import * as fsPromises from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { ApiError, failureOf } from '../api/errors.ts';
import { bool, text } from '../config/parsers.ts';
import { resolveValues, type Flags, type SettingsTable } from '../config/setting.ts';
import { resolveSettings } from '../config/settings.ts';
import { commonFailure, failureCause, someNames, type FailureCause } from '../core/report.ts';
import type { Masker } from '../core/mask.ts';
import { NAME_PATTERN } from '../core/names.ts';
import { renderExportedManifest, type ExportedManifest } from '../manifests/export.ts';
import { ConfigError, UsageError, errorMessage } from '../runtime/errors.ts';
import { writeFileSynced } from '../runtime/write-file.ts';
import { connect, type Connection } from './connect.ts';
import { commandLogger, type CommandContext } from './context.ts';
import { shortUsage } from './help.ts';

const EXPORT = { commands: ['export'], group: 'export' } as const;

export const settings = {
  exportOut: {
    flag: '--out DIR',
    ...EXPORT,
    help: 'write DIR/<org>.yaml for each org',
    parse: text,
    defaultText: 'all to stdout, as YAML documents',
  },
  force: {
    flag: '--force',
    ...EXPORT,
    help: 'overwrite files that already exist in DIR',
    parse: bool,
    default: false,
  },
} as const satisfies SettingsTable;

/** The folder of an org's policy files, relative to the export folder and to its manifest. */
const policyFolder = (org: string) => `policies/${org}`;

/** The longest file name, in bytes of UTF-8, of ext4, XFS, APFS and NTFS. */
const MAX_NAME_BYTES = 255;

/** Why `name` cannot name a file or folder checked out on Linux, macOS or Windows, if it cannot. */
export function fileNameProblem(name: string): string | undefined {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES)
    return `the name is ${bytes} bytes long, and a file name may have at most ${MAX_NAME_BYTES}`;
  if (name === '' || name === '.' || name === '..') return 'that is not a file name';
  // oxlint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f/\\<>:"|?*]/.test(name))
    return 'the name holds a control character or one of / \\ < > : " | ? *';
  if (/[. ]$/.test(name)) return 'the name ends with a dot or a space, which Windows drops';
  if (/^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i.test(name))
    return 'Windows keeps the name for a device';
  return undefined;
}

/** A name from the service in a message: the first 60 characters of a long one. */
const brief = (name: string) => (name.length > 60 ? `${name.slice(0, 57)}...` : name);

/** Each org's manifest, then its policy documents, with how messages name them and what to do. */
function exportFiles(exported: readonly Exported[]) {
  return exported.flatMap(({ org, text: body, policyFiles }) => [
    {
      org,
      relative: `${org}.yaml`,
      body,
      what: `org ${brief(org)}`,
      todo: 'export that org without --out (to stdout)',
    },
    ...policyFiles.map(({ path: relative, text: policy }) => ({
      org,
      relative,
      body: policy,
      what: `org ${brief(org)}: policy ${brief(relative.slice(relative.lastIndexOf('/') + 1, -'.yaml'.length))}`,
      todo: 'rename the policy on the service, or export the org without --out (its manifest then names the policy in a comment)',
    })),
  ]);
}

/** Each file that cannot have its name, and each two that differ only in case (macOS, Windows). */
function exportNameProblems(files: ReturnType<typeof exportFiles>): string[] {
  const problems: string[] = [];
  const folded = new Map<string, string>();
  for (const { relative, what, todo } of files) {
    const why = relative
      .split('/')
      .map(fileNameProblem)
      .find((problem) => problem !== undefined);
    const twin = folded.get(relative.toLowerCase());
    if (why !== undefined) problems.push(`${what} (${brief(relative)}): ${why}; ${todo}`);
    else if (twin !== undefined) {
      problems.push(`${what} (${relative}) and ${twin} differ only in case: ${todo}`);
    } else folded.set(relative.toLowerCase(), relative);
  }
  return problems;
}

/** Makes `dir` (its parent exists), or checks that it is a folder and not a symbolic link. */
async function folder(dir: string): Promise<void> {
  await fsPromises.mkdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const found = await fsPromises.lstat(dir);
  if (found.isSymbolicLink()) {
    throw new ConfigError(
      `${dir} is a symbolic link (export never writes through one); remove it, or point --out elsewhere`,
    );
  }
  if (!found.isDirectory())
    throw new ConfigError(`${dir} is in the way: export writes policy files into a folder there`);
}

type Exported = { org: string; status: 'ok' } & ExportedManifest;
type Failed = { org: string; status: 'failed'; error: string; cause: FailureCause | undefined };

/** One org's manifest and policy documents (`toFiles`: as files), or why it failed. */
async function exportOrg(
  { client, apiUrl }: Connection,
  org: string,
  toFiles: boolean,
  secrets: Masker,
): Promise<Exported | Failed> {
  try {
    const listing = (await client.listEnvironments(org)).environments;
    // Known after the listing: a field this dialect cannot send is not written, and policy
    // documents exist only in kosli's.
    const dialect = client.dialect()?.dialect ?? 'contract';
    const policies =
      dialect === 'kosli'
        ? {
            documents: await client.listPolicyDocuments(org),
            fileOf: toFiles ? (name: string) => `${policyFolder(org)}/${name}.yaml` : undefined,
          }
        : undefined;
    const holds = (value: string) => secrets.holds(value);
    const rendered = renderExportedManifest(org, listing, apiUrl.origin, dialect, policies, holds);
    return { org, status: 'ok', ...rendered };
  } catch (error) {
    // An org the service does not know is the export's "names nothing": say what to check.
    const unknown =
      error instanceof ApiError && error.status === 404
        ? `; the service knows no organization "${org}": check the name given to --org (and --api-url)`
        : '';
    const cause = failureCause(failureOf(error));
    return { org, status: 'failed', error: `${errorMessage(error)}${unknown}`, cause };
  }
}

/** What is at `file`, without following a symbolic link there. */
async function entryAt(file: string): Promise<'link' | 'other' | undefined> {
  const found = await fsPromises.lstat(file).catch(() => undefined);
  return found === undefined ? undefined : found.isSymbolicLink() ? 'link' : 'other';
}

async function refuseExisting(files: readonly string[]): Promise<void> {
  for (const file of files) {
    const kind = await entryAt(file);
    if (kind === 'link') {
      throw new ConfigError(
        `${file} is a symbolic link (export never writes through one); remove it, or pass --force to replace the link itself with the file`,
      );
    }
    if (kind !== undefined)
      throw new ConfigError(`${file} already exists; pass --force to overwrite it`);
  }
}

/**
 * Writes one file without following a symbolic link at its path: a new temp file (O_EXCL) takes
 * its name, by a rename with `force` (a link is replaced, not followed), else by a hard link that
 * takes the name only if it is still free.
 */
async function writeExportFile(file: string, body: string, force: boolean): Promise<void> {
  const temp = path.join(
    path.dirname(file),
    `.envsync-export.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`,
  );
  await writeFileSynced(temp, body, { exclusive: true, mode: 0o644 });
  try {
    if (force) await fsPromises.rename(temp, file);
    else {
      await fsPromises.link(temp, file).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
        await refuseExisting([file]);
        throw error;
      });
    }
  } finally {
    await fsPromises.unlink(temp).catch(() => undefined);
  }
}

/** Writes the export, once every name and file in the way is checked: a refusal writes nothing. */
async function writeExport(
  outDir: string,
  exported: readonly Exported[],
  force: boolean,
  { secrets, logger }: { secrets: Masker; logger: Logger },
): Promise<void> {
  const files = exportFiles(exported);
  const problems = exportNameProblems(files);
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
  const where = (relative: string) => path.join(outDir, ...relative.split('/'));
  if (!force) await refuseExisting(files.map((f) => where(f.relative)));
  const withPolicies = exported.filter((r) => r.policyFiles.length > 0).map((r) => r.org);
  if (withPolicies.length > 0) await folder(path.join(outDir, 'policies'));
  for (const org of withPolicies) await folder(where(policyFolder(org)));
  for (const { org, relative, body } of files) {
    const file = where(relative);
    await writeExportFile(file, secrets.mask(body), force);
    const what = relative === `${org}.yaml` ? org : `a policy document of ${org}`;
    logger.info({ org, file }, `exported ${what}`);
  }
}

/** `envsync export`: the live listing as manifests. */
export async function run(ctx: CommandContext, flags: Flags): Promise<number> {
  const resolved = await resolveSettings(flags, ctx.env, ctx.cwd);
  const { exportOut, force } = resolveValues(settings, { flags, env: ctx.env });
  const orgs = [...new Set(resolved.orgs ?? [])];
  if (orgs.length === 0) {
    throw new UsageError(
      '--org ORG is required (repeat it for several orgs)',
      shortUsage('export'),
    );
  }
  const bad = orgs.find((org) => !NAME_PATTERN.test(org));
  if (bad !== undefined)
    throw new UsageError(`--org: ${JSON.stringify(bad)} is not a valid org name`);
  const logger = commandLogger(ctx, resolved, 'export');
  const outDir = exportOut === undefined ? undefined : path.resolve(ctx.cwd, exportOut);
  if (outDir !== undefined && !force)
    await refuseExisting(orgs.map((org) => path.join(outDir, `${org}.yaml`)));
  const api = await connect(resolved, ctx, logger);
  let results: (Exported | Failed)[];
  try {
    const toFiles = outDir !== undefined;
    results = await Promise.all(orgs.map((org) => exportOrg(api, org, toFiles, ctx.secrets)));
  } finally {
    await api.client.close();
  }
  const say = (line: string) => ctx.stderr.write(`envsync export: ${line}\n`);
  const failed = results.filter((r): r is Failed => r.status === 'failed');
  // Every org failed for one cause: said once, with what to check; each org's error at debug.
  const failure = commonFailure(results);
  if (failure !== undefined) {
    const orgList = failure.orgs.length > 1 ? ` (orgs: ${someNames(failure.orgs)})` : '';
    say(`${failure.message}. ${failure.hint}${orgList}`);
  }
  for (const { org, error } of failed) {
    if (failure === undefined) say(`org ${org}: ${error}`);
    else logger.debug({ org }, `org ${org}: ${error}`);
  }
  const exported = results.filter((r): r is Exported => r.status === 'ok');
  const unseen = [...new Set(exported.flatMap((r) => r.unseen))];
  if (unseen.length > 0) {
    const them = unseen.length === 1 ? 'it' : 'them';
    const where = exported.filter((r) => r.unseen.length > 0).map((r) => r.org);
    say(
      `the listing does not show ${unseen.join(', ')} (org ${where.join(', ')}): left out of the manifests where unseen, so sync leaves ${them} as the service holds ${them}; declare ${them} to manage ${them}.`,
    );
  }
  for (const { org, secretsLeftOut: left } of exported.filter((r) => r.secretsLeftOut.length > 0)) {
    say(
      `org ${org}: left out, as they hold a secret envsync holds (a token), so that no manifest sends it back masked: ${left.join('; ')}; write them by hand`,
    );
  }
  const withPolicies = exported.filter((r) => r.policiesLeftOut.length > 0).map((r) => r.org);
  if (outDir === undefined && withPolicies.length > 0) {
    const [noun, have] = withPolicies.length === 1 ? ['org', 'has'] : ['orgs', 'have'];
    say(
      `${noun} ${withPolicies.join(', ')} ${have} policy documents; a manifest names each one's file, so they are exported only with --out DIR (they are listed in a comment)`,
    );
  }
  if (outDir === undefined) ctx.stdout.write(exported.map((r) => r.text).join('---\n'));
  else await writeExport(outDir, exported, force, { secrets: ctx.secrets, logger });
  return failed.length > 0 ? 1 : 0;
}
