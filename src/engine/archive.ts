/**
 * The archives of an org that prunes, sent after every other change of the org: each is one
 * request (`PUT .../{name}/archive`), bounded by the client's gate like any other. Whatever the
 * plan says (a saved plan is a file anyone who can write it can reseal), each archive is sent
 * only if envsync owns the environment at that moment: the state file records it, or the listing
 * the pass read shows it with this org's ownership tag. The guard (core/ownership.ts,
 * archiveGuard) then decides whether any of those is sent at all.
 */
import { failureOf } from '../api/errors.ts';
import type { ObservedEnvironment, OrgPlan } from '../core/model.ts';
import type { ArchiveOutcome } from '../core/outcome.ts';
import {
  archiveGuard,
  DEFAULT_MAX_ARCHIVE,
  ownedBy,
  OWNER_TAG_KEY,
  ownerTagValue,
  type OwnedBy,
} from '../core/ownership.ts';
import { isTransient } from '../core/retry-policy.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { ApplyDeps } from './apply.ts';

/**
 * Sends the org's archives that envsync owns, or refuses them all (the guard); outcomes by
 * environment name. `listed` is the org's listing the pass read (for a saved plan, the live one
 * it was checked against).
 */
export async function sendArchives(
  plan: OrgPlan,
  {
    client,
    state,
    logger,
    changesReported = false,
    maxArchive = DEFAULT_MAX_ARCHIVE,
    reviewed,
    manifests,
  }: ApplyDeps,
  listed: readonly ObservedEnvironment[],
): Promise<Map<string, ArchiveOutcome>> {
  const outcomes = new Map<string, ArchiveOutcome>();
  if ((plan.archives ?? []).length === 0) return outcomes;
  const { org } = plan;
  const entries = new Map(listed.map((entry) => [entry.name, entry]));
  const records = state.get(org);
  const archives: { name: string; ownedBy: readonly OwnedBy[] }[] = [];
  for (const { name } of plan.archives ?? []) {
    const entry = entries.get(name);
    const record = Object.hasOwn(records, name) ? records[name] : undefined;
    const owners = entry === undefined ? [] : ownedBy(org, entry, record);
    if (owners.length > 0) {
      archives.push({ name, ownedBy: owners });
      continue;
    }
    const error =
      entry === undefined
        ? `not archived: the listing of org ${org} does not have ${name}`
        : `not archived: envsync does not own ${org}/${name}: the state file has no record of ` +
          `it and it does not carry the tag ${OWNER_TAG_KEY}: ${ownerTagValue(org)}`;
    outcomes.set(name, { result: 'failed', sent: false, error, ownedBy: [] });
    logger.error({ org, env: name, event: 'prune.not-owned' }, error);
  }
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
    for (const { name, ownedBy: owners } of archives) {
      const error = `not archived: ${refused}`;
      outcomes.set(name, { result: 'failed', sent: false, error, ownedBy: owners });
    }
    return outcomes;
  }
  await Promise.all(
    archives.map(async ({ name, ownedBy: owners }) => {
      try {
        const found = await client.archiveEnvironment(org, name);
        outcomes.set(name, { result: 'applied', ownedBy: owners });
        logger[changesReported ? 'debug' : 'info'](
          { org, env: name, action: 'archive', ownedBy: owners, found },
          found
            ? `archive ${org}/${name}`
            : `archive ${org}/${name}: the service no longer has it (404), so it is gone already`,
        );
      } catch (error) {
        outcomes.set(name, {
          result: 'failed',
          error: errorMessage(error),
          transient: isTransient(failureOf(error)),
          ownedBy: owners,
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
