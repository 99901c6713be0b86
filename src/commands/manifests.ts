import path from 'node:path';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import { phaseTimer } from './context.ts';
import { suggest } from '../core/suggest.ts';
import { ConfigError } from '../runtime/errors.ts';
import { emptyRootLine } from '../manifests/parse.ts';
import {
  formatProblem,
  loadManifests,
  skippedLine,
  type ManifestSet,
  type OrgManifest,
} from '../manifests/load.ts';

/** Loads the manifests (a missing root is a ConfigError), logging each other YAML file skipped. */
export async function loadManifestTree(
  settings: Settings,
  cwd: string,
  logger: Logger,
  paths?: readonly string[],
): Promise<ManifestSet> {
  const phase = phaseTimer(logger);
  phase('reading the manifests');
  try {
    const manifests = await loadManifests({
      root: settings.manifests,
      paths,
      cwd,
      maxFileBytes: settings.maxFileBytes,
      exclude: settings.exclude,
      strict: settings.strict,
    });
    phase('manifests read', () => ({
      files: manifests.fileCount,
      orgs: manifests.orgs.length,
      environments: manifests.orgs.reduce((n, org) => n + org.environments.length, 0),
    }));
    for (const file of manifests.skipped) logger.info({ file: file.file }, skippedLine(file));
    const empty = emptyRootLine(settings.manifests, manifests, paths);
    if (empty !== undefined) {
      if (settings.strict) throw new ConfigError(`${empty} (--strict refuses a root without one)`);
      logger.warn({ root: settings.manifests }, empty);
    }
    return manifests;
  } catch (error) {
    throw rootError(error, path.resolve(cwd, settings.manifests));
  }
}

/** A manifests root that is not there, as a clear configuration error; another error as it is. */
export function rootError(error: unknown, root: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'ENOENT' && code !== 'ENOTDIR') return error;
  return new ConfigError(
    `manifests directory ${root} does not exist; pass --manifests DIR or set ENVSYNC_MANIFESTS`,
  );
}

/** The orgs `--org` selects (every org without it). */
export function selectedOrgs(settings: Settings, manifests: ManifestSet): readonly OrgManifest[] {
  return manifests.orgs.filter((o) => settings.orgs === undefined || settings.orgs.includes(o.org));
}

/** Refuses an `--org` no manifest declares: a typo would otherwise do nothing, and succeed. */
export function checkSelectedOrgs(settings: Settings, manifests: ManifestSet): void {
  const declared = manifests.orgs.map((o) => o.org);
  const unknown = (settings.orgs ?? []).filter((org) => !declared.includes(org));
  if (unknown.length === 0) return;
  const lines = unknown.map((org) => {
    const near = suggest(org, declared);
    return `--org ${org}: no manifest declares this org${near === undefined ? '' : ` (did you mean "${near}"?)`}`;
  });
  const known =
    declared.length === 0
      ? 'the manifests declare no org'
      : `the manifests declare ${declared.length > 10 ? `${declared.slice(0, 10).join(', ')}, ...` : declared.join(', ')}`;
  // A file too broken to say its org may be the one that declares it: say which, and why.
  const unread = manifests.unattributed.slice(0, 3).map(formatProblem);
  const more = manifests.unattributed.length - unread.length;
  const broken =
    unread.length === 0
      ? ''
      : `\nThese problems keep some files from saying which org they declare:\n  ${unread.join('\n  ')}${more > 0 ? `\n  ... and ${more} more` : ''}`;
  throw new ConfigError(`${lines.join('; ')}; ${known}${broken}`);
}
