/** What `plan` asks the service of the names its creates and renames bring (kosli only). */
import { MAX_ASKED_NAMES, type OrgReport } from '../core/report.ts';
import type { EnvironmentsClient } from '../api/client.ts';

/**
 * The report with each create and rename whose name the service says was archived marked so,
 * since it starts a new environment without that one's history; a name not asked, or whose read
 * failed, is `not-checked`.
 */
export async function withArchivedNames(
  report: OrgReport,
  client: Pick<EnvironmentsClient, 'wasArchived'>,
): Promise<OrgReport> {
  const asked = report.changes.filter((c) => c.action === 'create' || c.action === 'rename');
  const said = new Map(
    await Promise.all(
      asked.slice(0, MAX_ASKED_NAMES).map(async ({ name }) => {
        const archived = await client.wasArchived(report.org, name).catch(() => undefined);
        return [name, archived] as const;
      }),
    ),
  );
  const changes = report.changes.map((change) => {
    const archived = asked.includes(change)
      ? (said.get(change.name) ?? ('not-checked' as const))
      : false;
    return archived === false ? change : { ...change, wasArchived: archived };
  });
  return { ...report, changes };
}
