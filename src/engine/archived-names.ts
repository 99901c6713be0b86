/** What `plan` asks the service of the names its creates and renames bring (kosli only). */
import type { EnvironmentsClient } from '../api/client.ts';
import { MAX_ASKED_NAMES, type OrgReport } from '../core/report.ts';

/** Each create and rename marked when its name was archived; `not-checked` when not asked. */
export async function withArchivedNames(
  report: OrgReport,
  client: Pick<EnvironmentsClient, 'wasArchived'>,
): Promise<OrgReport> {
  const asked = report.changes.filter((c) => c.action === 'create' || c.action === 'rename');
  // A read that fails, like a name past the first ones, is not checked: the plan goes on.
  const said = await Promise.all(
    asked.map(async ({ name }, i) =>
      i < MAX_ASKED_NAMES ? client.wasArchived(report.org, name).catch(() => undefined) : undefined,
    ),
  );
  const changes = report.changes.map((change) => {
    const i = asked.indexOf(change);
    if (i < 0 || said[i] === false) return change;
    return { ...change, wasArchived: said[i] ?? ('not-checked' as const) };
  });
  return { ...report, changes };
}
