/**
 * Problems found in an org's manifests once the run knows more than the files say: a member that
 * names no environment of the org (after its listing), a field the API dialect cannot send. Each
 * is located in the manifests where they can tell, and holds the org (no request is sent to it).
 */
import type { ResolvedDialect } from '../core/dialect.ts';
import type { UnknownMember } from '../core/members.ts';
import type { ProblemReport } from '../core/report.ts';
import { unsendableMessage, type UnsendableField } from '../core/requests.ts';
import type { ManifestProblem } from '../manifests/parse.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';

export function problemReport(problem: ManifestProblem): ProblemReport {
  return {
    file: problem.file,
    line: problem.line,
    column: problem.column,
    path: problem.path,
    message: problem.message,
  };
}

/** A member no environment of the org has, located at the member. */
export async function memberProblem(
  { env, spec, member }: UnknownMember,
  manifest: OrgManifest,
  manifests: ManifestSet,
): Promise<ProblemReport> {
  const where = await manifests.locate?.(manifest.org, env, [spec.manifestKey], { item: member });
  return {
    file: where?.file ?? manifest.files[0] ?? '',
    line: where?.line ?? 1,
    column: where?.column ?? 1,
    path: where?.path ?? '',
    message:
      `${spec.item ?? 'member'} "${member}" of "${env.name}" is not an environment of org ` +
      `"${manifest.org}": neither the manifests nor the service's listing have it`,
  };
}

/** A declared field the dialect cannot send, located at its key. */
export async function unsendableProblem(
  { env, spec }: UnsendableField,
  dialect: ResolvedDialect,
  manifest: OrgManifest,
  manifests: ManifestSet,
): Promise<ProblemReport> {
  const where = await manifests.locate?.(manifest.org, env, [], { key: spec.manifestKey });
  return {
    file: where?.file ?? manifest.files[0] ?? '',
    line: where?.line ?? 1,
    column: where?.column ?? 1,
    path: where?.path ?? '',
    message: unsendableMessage(spec, dialect),
  };
}
