/**
 * Problems found in an org's manifests once the run knows more than the files say: a field, a
 * rename or `prune` the API dialect cannot send or do, a rename onto a name the service has too,
 * a member that names no environment of the org. Each is located in the manifests, and holds the
 * org (no request is sent to it).
 */
import { type ApiDialect, dialectWords, type ResolvedDialect } from '../core/dialect.ts';
import { FIELD_LIST, fieldWarning } from '../core/fields.ts';
import type { DesiredEnvironment, ObservedEnvironment } from '../core/model.ts';
import { renameConflicts, unknownMembers } from '../core/plan.ts';
import type { ProblemReport } from '../core/report.ts';
import { formatProblem } from '../core/validation.ts';
import { unsendableFields, unsendableMessage } from '../core/requests.ts';
import type { ManifestProblem } from '../manifests/parse.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';
import type { Logger } from 'pino';
import type { Place } from '../manifests/yaml-document.ts';

/** A problem at `env`'s place below `path` (or at the org's first file when it cannot tell). */
export function locatedProblem(
  manifests: ManifestSet,
  manifest: OrgManifest,
  env: DesiredEnvironment,
  path: readonly (string | number)[],
  place: Place | undefined,
  message: string,
): ProblemReport {
  const where = manifests.locate?.(env, path, place);
  return {
    file: where?.file ?? manifest.files[0] ?? '',
    line: where?.line ?? 1,
    column: where?.column ?? 1,
    path: where?.path ?? '',
    message,
  };
}

/** A manifest problem as reports show it (without the org it holds). */
export function problemReport({ org: _org, ...problem }: ManifestProblem): ProblemReport {
  return problem;
}

/** Located warnings for what `dialect`'s service retired (an error if strict) or deprecated. */
export function fieldWarnings(
  manifest: OrgManifest,
  dialect: ApiDialect,
  manifests: ManifestSet,
  strict = false,
): ProblemReport[] {
  return manifest.environments.flatMap((env) =>
    FIELD_LIST.flatMap((spec) => {
      const ignored = env[spec.name] === undefined || (strict && spec.retired !== undefined);
      const message = ignored ? undefined : fieldWarning(spec, dialect);
      const key = { key: spec.manifestKey };
      return message === undefined
        ? []
        : locatedProblem(manifests, manifest, env, [], key, message);
    }),
  );
}

/** An org's warnings in one log line, however many: the first, and how many more the report lists. */
export function logWarnings(logger: Logger, org: string, warnings: readonly ProblemReport[]) {
  const [first, ...more] = warnings;
  if (first === undefined) return;
  const rest = more.length === 0 ? '' : ` (and ${more.length} more warnings, each in the report)`;
  logger.warn({ org, warnings: warnings.length }, `warning: ${formatProblem(first)}${rest}`);
}

/**
 * What the org's manifests declare that the dialect cannot send or do: a field (a retired one
 * under `strict`), and `renamed_from` (rename) and `prune` (archive), which only the kosli
 * dialect's API has. Located at each key.
 */
export function unsendable(
  manifest: OrgManifest,
  dialect: ResolvedDialect,
  manifests: ManifestSet,
  strict = false,
): ProblemReport[] {
  const at = (env: DesiredEnvironment, key: string, message: string) =>
    locatedProblem(manifests, manifest, env, [], { key }, message);
  const problems = unsendableFields(manifest.environments, dialect.dialect, strict).map(
    ({ env, spec }) => at(env, spec.manifestKey, unsendableMessage(spec, dialect)),
  );
  if (dialect.dialect === 'kosli') return problems;
  const why = (what: string, key: string) =>
    `"${key}" cannot be done in the API dialect ${dialectWords(dialect)}, whose API has no ${what}: ` +
    `it needs the kosli dialect (--api-dialect kosli, or auto against a service whose listing has that shape). ` +
    `Remove the key or change the dialect; nothing is sent to this org`;
  if (manifest.prune?.value === true) {
    problems.push({ ...manifest.prune, message: why('archive operation', 'prune') });
  }
  for (const env of manifest.environments) {
    if (env.renamedFrom !== undefined) {
      problems.push(at(env, 'renamed_from', why('rename operation', 'renamed_from')));
    }
  }
  return problems;
}

/**
 * What the manifests ask that the listing makes impossible: a rename onto a name the service has
 * too, a member that names no environment of the org (neither the manifests' nor the listing's).
 */
export function listingProblems(
  manifest: OrgManifest,
  observed: readonly ObservedEnvironment[],
  manifests: ManifestSet,
): ProblemReport[] {
  const conflicts = renameConflicts(manifest.environments, observed);
  if (conflicts.length > 0) {
    return conflicts.map(({ env, from }) =>
      locatedProblem(
        manifests,
        manifest,
        env,
        [],
        { key: 'renamed_from' },
        `"${env.name}" is renamed from "${from}", but the service has both names in org ` +
          `"${manifest.org}": envsync cannot rename onto an existing environment. Archive or rename one ` +
          `of them on the service, or remove renamed_from if the rename is done; nothing is sent to this org`,
      ),
    );
  }
  return unknownMembers(manifest.environments, observed).map(({ env, spec, member }) =>
    locatedProblem(
      manifests,
      manifest,
      env,
      [spec.manifestKey],
      { item: member },
      `${spec.item ?? 'member'} "${member}" of "${env.name}" is not an environment of org ` +
        `"${manifest.org}": neither the manifests nor the service's listing have it`,
    ),
  );
}
