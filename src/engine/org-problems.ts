/**
 * Problems found in an org's manifests once the run knows more than the files say: a member that
 * names no environment of the org (after its listing), a field the API dialect cannot send. Each
 * is located in the manifests where they can tell, and holds the org (no request is sent to it).
 */
import { dialectWords, type ResolvedDialect } from '../core/dialect.ts';
import {
  type RenameConflict,
  renameConflicts,
  type UnknownMember,
  unknownMembers,
} from '../core/plan.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import type { ProblemReport } from '../core/report.ts';
import { type UnsendableField, unsendableFields, unsendableMessage } from '../core/requests.ts';
import type { ManifestProblem } from '../manifests/parse.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';

/**
 * A problem at the place `locate` found (`where`), or at the org's first file when it could not
 * tell.
 */
export function locatedProblem(
  where: { file: string; line: number; column: number; path: string } | undefined,
  manifest: OrgManifest,
  message: string,
): ProblemReport {
  return {
    file: where?.file ?? manifest.files[0] ?? '',
    line: where?.line ?? 1,
    column: where?.column ?? 1,
    path: where?.path ?? '',
    message,
  };
}

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
  return locatedProblem(
    where,
    manifest,
    `${spec.item ?? 'member'} "${member}" of "${env.name}" is not an environment of org ` +
      `"${manifest.org}": neither the manifests nor the service's listing have it`,
  );
}

/** A declared field the dialect cannot send, located at its key. */
export async function unsendableProblem(
  { env, spec }: UnsendableField,
  dialect: ResolvedDialect,
  manifest: OrgManifest,
  manifests: ManifestSet,
): Promise<ProblemReport> {
  const where = await manifests.locate?.(manifest.org, env, [], { key: spec.manifestKey });
  return locatedProblem(where, manifest, unsendableMessage(spec, dialect));
}

/**
 * What the org's manifests declare that the dialect cannot do beside fields: `renamed_from`
 * (rename) and `prune` (archive), which only the kosli dialect's API has. Located at each key.
 */
export async function lifecycleRefusals(
  manifest: OrgManifest,
  dialect: ResolvedDialect,
  manifests: ManifestSet,
): Promise<ProblemReport[]> {
  if (dialect.dialect === 'kosli') return [];
  const why = (what: string, key: string) =>
    `"${key}" cannot be done in the API dialect ${dialectWords(dialect)}, whose API has no ${what}: ` +
    `it needs the kosli dialect (--api-dialect kosli, or auto against a service whose listing has that shape). ` +
    `Remove the key or change the dialect; nothing is sent to this org`;
  const problems: ProblemReport[] = [];
  const prune = manifest.prune;
  if (prune !== undefined && prune.value) {
    problems.push({ ...prune, message: why('archive operation', 'prune') });
  }
  for (const env of manifest.environments) {
    if (env.renamedFrom === undefined) continue;
    const where = await manifests.locate?.(manifest.org, env, [], { key: 'renamed_from' });
    problems.push(locatedProblem(where, manifest, why('rename operation', 'renamed_from')));
  }
  return problems;
}

/** A rename whose old and new names the service both has, located at its `renamed_from`. */
export async function renameConflictProblem(
  { env, from }: RenameConflict,
  manifest: OrgManifest,
  manifests: ManifestSet,
): Promise<ProblemReport> {
  const where = await manifests.locate?.(manifest.org, env, [], { key: 'renamed_from' });
  return locatedProblem(
    where,
    manifest,
    `"${env.name}" is renamed from "${from}", but the service has both names in org ` +
      `"${manifest.org}": envsync cannot rename onto an existing environment. Archive or rename one ` +
      `of them on the service, or remove renamed_from if the rename is done; nothing is sent to this org`,
  );
}

/**
 * What the org's manifests declare that the dialect cannot send or do (a field, a rename,
 * `prune`), located; empty when there is none.
 */
export async function unsendable(
  manifest: OrgManifest,
  dialect: ResolvedDialect,
  manifests: ManifestSet,
): Promise<ProblemReport[]> {
  const found = unsendableFields(manifest.environments, dialect.dialect);
  return [
    ...(await Promise.all(
      found.map((field) => unsendableProblem(field, dialect, manifest, manifests)),
    )),
    ...(await lifecycleRefusals(manifest, dialect, manifests)),
  ];
}

/**
 * What the manifests ask that the listing makes impossible: a rename onto a name the service has
 * too, a member that names no environment of the org (neither the manifests' nor the listing's).
 */
export async function listingProblems(
  manifest: OrgManifest,
  observed: readonly ObservedEnvironment[],
  manifests: ManifestSet,
): Promise<ProblemReport[]> {
  const conflicts = renameConflicts(manifest.environments, observed);
  if (conflicts.length > 0) {
    return Promise.all(
      conflicts.map((conflict) => renameConflictProblem(conflict, manifest, manifests)),
    );
  }
  const unknown = unknownMembers(manifest.environments, observed);
  return Promise.all(unknown.map((problem) => memberProblem(problem, manifest, manifests)));
}
