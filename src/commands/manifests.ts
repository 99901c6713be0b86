import path from 'node:path';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import { ConfigError } from '../errors.ts';
import { loadManifests, type ManifestSet, type OrgManifest } from '../manifests/load.ts';

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

/** The orgs `--org` selects (every org without it). */
export function selectedOrgs(settings: Settings, manifests: ManifestSet): readonly OrgManifest[] {
  return manifests.orgs.filter((o) => settings.orgs === undefined || settings.orgs.includes(o.org));
}

/** Warns about each `--org` no manifest declares: a typo there would otherwise do nothing. */
export function warnAboutUnknownOrgs(
  settings: Settings,
  manifests: ManifestSet,
  logger: Logger,
): void {
  for (const org of settings.orgs ?? []) {
    if (!manifests.orgs.some((o) => o.org === org)) {
      logger.warn({ org }, `--org ${org}: no manifest declares this org; nothing to do for it`);
    }
  }
}
