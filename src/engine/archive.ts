/**
 * The archives of an org that prunes, sent after every other change of the org: each is one
 * request (`PUT .../{name}/archive`), bounded by the client's gate like any other. The guard
 * (core/ownership.ts, archiveGuard) decides first whether any is sent at all.
 */
import { failureOf } from '../api/errors.ts';
import type { OrgPlan } from '../core/model.ts';
import type { ChangeOutcome } from '../core/outcome.ts';
import { archiveGuard, DEFAULT_MAX_ARCHIVE } from '../core/ownership.ts';
import { isTransient } from '../core/retry-policy.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { ApplyDeps } from './apply.ts';

/** Sends the org's archives, or refuses them all (the guard); outcomes by environment name. */
export async function sendArchives(
  plan: OrgPlan,
  {
    client,
    logger,
    changesReported = false,
    maxArchive = DEFAULT_MAX_ARCHIVE,
    reviewed,
    manifests,
  }: ApplyDeps,
): Promise<Map<string, ChangeOutcome>> {
  const outcomes = new Map<string, ChangeOutcome>();
  const archives = plan.archives ?? [];
  if (archives.length === 0) return outcomes;
  const { org } = plan;
  const refused = archiveGuard(
    org,
    archives.length,
    reviewed === true ? undefined : maxArchive,
    manifests?.unattributed.length,
  );
  if (refused !== undefined) {
    logger.error(
      { org, archives: archives.length, maxArchive, event: 'prune.guard' },
      `not archived: ${refused}`,
    );
    for (const { name } of archives) {
      outcomes.set(name, { result: 'failed', sent: false, error: `not archived: ${refused}` });
    }
    return outcomes;
  }
  await Promise.all(
    archives.map(async ({ name, ownedBy }) => {
      try {
        const found = await client.archiveEnvironment(org, name);
        outcomes.set(name, { result: 'applied' });
        logger[changesReported ? 'debug' : 'info'](
          { org, env: name, action: 'archive', ownedBy, found },
          found
            ? `archive ${org}/${name}`
            : `archive ${org}/${name}: the service no longer has it (404), so it is gone already`,
        );
      } catch (error) {
        outcomes.set(name, {
          result: 'failed',
          error: errorMessage(error),
          transient: isTransient(failureOf(error)),
        });
        logger.error(
          { org, env: name, action: 'archive' },
          `archive ${org}/${name} failed: ${errorMessage(error)}`,
        );
      }
    }),
  );
  return outcomes;
}
