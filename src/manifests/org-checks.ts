/**
 * The problems of one org that only its whole set of documents can show (assemble.ts merges
 * them): a name or policy document declared twice, renames (`renamed_from`) that clash, `prune:`
 * values that disagree, and the ownership tag declared under `prune`. Each problem is located
 * where the mistake is written, and names the other place it clashes with.
 */
import type { DesiredEnvironment, SourceLocation } from '../core/model.ts';
import { OWNER_TAG_KEY, ownerTagValue } from '../core/ownership.ts';
import type { DeclaredPolicyDocument } from '../core/policy-documents.ts';
import { formatPath } from './messages.ts';
import type { ManifestProblem } from './parse.ts';
import type { Place } from './text-locator.ts';

/**
 * Finds line and column of an environment read without positions (for the rare message), or of a
 * place below it: `path` from the environment, then `place` (a key of the mapping there, or an
 * item of the list there).
 */
export type Locate = (
  source: SourceLocation,
  path?: readonly (string | number)[],
  place?: Place,
) => { line: number; column: number };

/** A place in a file, as a message names it. */
export interface Position {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

const at = (place: Position) => `${place.file}:${place.line}:${place.column}`;

/** The problem of a name declared twice in one org: here, and where it was first. */
export function repeatedName(
  name: string,
  org: string,
  here: { file: string; index: number; line: number; column: number },
  there: { file: string; line: number; column: number } | undefined,
): ManifestProblem {
  return {
    file: here.file,
    line: here.line,
    column: here.column,
    path: `environments[${here.index}].name`,
    message:
      `environment "${name}" of org "${org}" is declared twice: here and at ` +
      (there ? `${there.file}:${there.line}:${there.column}` : 'another place'),
    org,
  };
}

/** The problem of a policy document declared twice in one org: here, and where it was first. */
export function repeatedPolicy(
  here: DeclaredPolicyDocument,
  there: DeclaredPolicyDocument,
  org: string,
): ManifestProblem {
  const { file, line, column, path } = here.source;
  return {
    file,
    line,
    column,
    path: `${path}.name`,
    message: `policy document "${here.name}" of org "${org}" is declared twice: here and at ${there.source.file}:${there.source.line}:${there.source.column}`,
    org,
  };
}

/** An environment that declares `renamed_from`, and where it was declared. */
export interface RenamedEnvironment {
  readonly name: string;
  readonly renamedFrom: string;
  readonly source: SourceLocation;
}

/**
 * The org's renames that clash: two environments renamed from one old name (the second is
 * refused, naming the first), and an environment renamed from a name the org declares (`declared`
 * finds where, or undefined): the rename would take that environment's name. Each is located at
 * its `renamed_from` value.
 */
export function renameProblems(
  org: string,
  renames: readonly RenamedEnvironment[],
  declared: (name: string) => Position | undefined,
  locate: Locate,
): ManifestProblem[] {
  const problems: ManifestProblem[] = [];
  const first = new Map<string, RenamedEnvironment>();
  const valueOf = ({ source }: RenamedEnvironment) => ({
    file: source.file,
    ...locate(source, ['renamed_from']),
    path: formatPath(['environments', source.index, 'renamed_from']),
  });
  for (const renamed of renames) {
    const { name, renamedFrom } = renamed;
    const holder = declared(renamedFrom);
    if (holder !== undefined) {
      problems.push({
        ...valueOf(renamed),
        message:
          `environment "${name}" of org "${org}" is renamed from "${renamedFrom}", which the org ` +
          `also declares, at ${at(holder)}: the rename would take that environment's name away; ` +
          `if "${renamedFrom}" is the environment being renamed, remove its entry, else remove ` +
          'renamed_from',
        org,
      });
    }
    const earlier = first.get(renamedFrom);
    if (earlier === undefined) {
      first.set(renamedFrom, renamed);
      continue;
    }
    problems.push({
      ...valueOf(renamed),
      message:
        `environment "${name}" of org "${org}" is renamed from "${renamedFrom}", and so is ` +
        `environment "${earlier.name}" at ${at(valueOf(earlier))}: only one environment can ` +
        `take over "${renamedFrom}"; keep renamed_from on the one that was "${renamedFrom}", and ` +
        'remove it from the other',
      org,
    });
  }
  return problems;
}

/** The org's `prune:` as a document declares it. */
export interface PruneAt extends Position {
  readonly value: boolean;
}

/** A document's `prune:` or `suspend:` that says the opposite of the org's first one. */
export function flagConflict(
  key: 'prune' | 'suspend',
  here: PruneAt,
  first: PruneAt,
  org: string,
): ManifestProblem {
  return {
    file: here.file,
    line: here.line,
    column: here.column,
    path: key,
    message:
      `${key} of org "${org}" is ${String(here.value)} here and ${String(first.value)} at ` +
      `${at(first)}: every document of the org that declares ${key} must say the same; make them ` +
      'agree, or declare it in one document only',
    org,
  };
}

/**
 * While the org's `prune` is on, no environment may declare the ownership tag's key: envsync sets
 * it on what it creates or updates, and its value decides what prune may archive. A declared one
 * would fight envsync's on every pass, and a copied value would claim what envsync did not make.
 * `sourceOf` finds where an environment was declared; asked only for those that break the rule.
 */
export function ownerTagProblems(
  org: string,
  prune: PruneAt,
  envs: Iterable<DesiredEnvironment>,
  sourceOf: (env: DesiredEnvironment) => SourceLocation | undefined,
  locate: Locate,
): ManifestProblem[] {
  const problems: ManifestProblem[] = [];
  for (const env of envs) {
    if (env.tags === undefined || !Object.hasOwn(env.tags, OWNER_TAG_KEY)) continue;
    const source = sourceOf(env);
    if (source === undefined) continue;
    problems.push({
      file: source.file,
      ...locate(source, ['tags'], { key: OWNER_TAG_KEY }),
      path: formatPath(['environments', source.index, 'tags', OWNER_TAG_KEY]),
      message:
        `tag "${OWNER_TAG_KEY}" of environment "${env.name}" is envsync's own while org "${org}" ` +
        `has prune: true (at ${at(prune)}): envsync sets ${OWNER_TAG_KEY}: ` +
        `${ownerTagValue(org)} on the environments it creates or updates, to mark those it owns ` +
        'and may archive; remove the key from tags, or rename it',
      org,
    });
  }
  return problems;
}
