/**
 * Merging parsed files into organizations, with the problems only an org's whole set of documents
 * can show, each located where the mistake is written and naming the place it clashes with.
 */
import type { DesiredEnvironment, SourceLocation } from '../core/model.ts';
import { compareNames } from '../core/names.ts';
import { OWNER_TAG_KEY, ownerTagValue } from '../core/ownership.ts';
import type { DeclaredPolicyDocument } from '../core/policy-documents.ts';
import { formatPath } from './messages.ts';
import type { ManifestProblem, ParsedManifest, PruneEntry } from './parse.ts';
import type { Place } from './yaml-document.ts';

/** Everything the manifests declare for one organization, and what is wrong with it. */
export interface OrgManifest {
  readonly org: string;
  /** Sorted by name. Empty when the org has problems: an invalid org is left alone entirely. */
  readonly environments: readonly DesiredEnvironment[];
  /** The files that serve the org: its manifests, and the policy files they name. */
  readonly files: readonly string[];
  readonly problems: readonly ManifestProblem[];
  /** Its `policies:`, their files read, sorted by name; absent when none, empty with problems. */
  readonly policies?: readonly DeclaredPolicyDocument[] | undefined;
  /** Its `prune:`; absent with problems (no environments and prune would archive all it owns). */
  readonly prune?: PruneDeclaration | undefined;
  /** Its `suspend:`, read as `prune` is. Absent: the org is not suspended. */
  readonly suspend?: PruneDeclaration | undefined;
}

/** An org's `prune:` or `suspend:` as declared, and where (`path`: the key). */
export type PruneDeclaration = PruneEntry & { readonly file: string; readonly path: string };

/** One file's parse, as assembleOrgs reads it. */
export type ParsedFile = ParsedManifest & { readonly file: string };

/** Finds line and column of a place below an environment: `path` from it, then `place`. */
type Locate = (
  source: SourceLocation,
  path?: readonly (string | number)[],
  place?: Place,
) => { line: number; column: number };

type Position = Pick<ManifestProblem, 'file' | 'line' | 'column'>;

const at = (place: Position) => `${place.file}:${place.line}:${place.column}`;

/** A place the fast reader left without line and column is found when a message needs it. */
function positionOf(s: SourceLocation, locate: Locate): Position {
  const { line, column = 1 } = s;
  return line === undefined ? { file: s.file, ...locate(s) } : { file: s.file, line, column };
}

function problem(where: Position, path: string, message: string, org: string): ManifestProblem {
  return { file: where.file, line: where.line, column: where.column, path, message, org };
}

/** Names declared twice that are reported one by one, per org; the rest are counted. */
const MAX_REPEATS_SHOWN = 5;

interface OrgParts {
  envs: Map<string, DesiredEnvironment>;
  /** Where each name was first declared, valid document or not (a repeat names it). */
  first: Map<string, SourceLocation>;
  files: Set<string>;
  problems: ManifestProblem[];
  repeats: number;
  /** Where the first repeat not shown one by one is. */
  moreRepeats?: SourceLocation;
  policies: Map<string, DeclaredPolicyDocument>;
  /** The environments that declare `renamed_from` (few), checked once the org is whole. */
  renames: { env: DesiredEnvironment; source: SourceLocation }[];
  prune?: PruneDeclaration;
  suspend?: PruneDeclaration;
}

/** Merges parsed documents into orgs, with the problems only a whole org shows. */
export function assembleOrgs(
  parsed: readonly ParsedFile[],
  locate: Locate = (source) => ({ line: source.line ?? 1, column: source.column ?? 1 }),
): { orgs: OrgManifest[]; unattributed: ManifestProblem[] } {
  const byOrg = new Map<string, OrgParts>();
  const unattributed: ManifestProblem[] = [];
  const partsOf = (org: string): OrgParts => {
    const parts = byOrg.get(org) ?? {
      envs: new Map(),
      first: new Map(),
      files: new Set(),
      problems: [],
      repeats: 0,
      policies: new Map(),
      renames: [],
    };
    byOrg.set(org, parts);
    return parts;
  };
  /** A name declared at `here`: true for its first declaration, false for a repeat. */
  const where = (s: SourceLocation) => positionOf(s, locate);
  const declare = (org: string, name: string, here: SourceLocation) => {
    const parts = partsOf(org);
    const first = parts.first.get(name);
    if (first === undefined) {
      parts.first.set(name, here);
      return true;
    }
    // One broken file says so in a few lines, not thousands: the rest are counted.
    if (++parts.repeats > MAX_REPEATS_SHOWN) parts.moreRepeats ??= here;
    else {
      const message = `environment "${name}" of org "${org}" is declared twice: here and at ${at(where(first))}`;
      parts.problems.push(problem(where(here), `environments[${here.index}].name`, message, org));
    }
    return false;
  };
  for (const file of parsed) {
    for (const found of file.problems) {
      const parts = found.org === undefined ? undefined : partsOf(found.org);
      (parts?.problems ?? unattributed).push(found);
      parts?.files.add(found.file);
    }
    for (const [document, doc] of file.documents.entries()) {
      const { org } = doc;
      const parts = partsOf(org);
      parts.files.add(file.file);
      for (const key of ['prune', 'suspend'] as const) {
        const declared = doc[key];
        if (declared === undefined) continue;
        const here = { ...declared, file: file.file, path: key };
        const first = parts[key];
        if (first === undefined) parts[key] = here;
        else if (first.value !== here.value) {
          const message =
            `${key} of org "${org}" is ${String(here.value)} here and ${String(first.value)} at ` +
            `${at(first)}: every document of the org that declares ${key} must say the same; make them ` +
            'agree, or declare it in one document only';
          parts.problems.push(problem(here, key, message, org));
        }
      }
      for (const policy of doc.policyDocuments ?? []) {
        // A policy file serves the org too: an edit of it alone is a change of the org's manifests.
        parts.files.add(policy.file);
        const first = parts.policies.get(policy.name);
        if (first === undefined) parts.policies.set(policy.name, policy);
        else {
          const message = `policy document "${policy.name}" of org "${org}" is declared twice: here and at ${at(first.source)}`;
          parts.problems.push(problem(policy.source, `${policy.source.path}.name`, message, org));
        }
      }
      for (const [index, env] of doc.environments.entries()) {
        // An environment a test builds has no source of its own.
        const source = env.source ?? { file: file.file, document, index };
        if (!declare(org, env.name, source)) continue;
        parts.envs.set(env.name, env);
        if (env.renamedFrom !== undefined) parts.renames.push({ env, source });
      }
    }
    // Names of documents that are not valid: a repeat is reported now, with their problems.
    for (const name of file.declared ?? [])
      declare(name.org, name.name, { file: file.file, ...name });
  }
  for (const [org, parts] of byOrg) {
    const more = parts.moreRepeats;
    if (more !== undefined) {
      const message = `... and ${parts.repeats - MAX_REPEATS_SHOWN} more environment name(s) of org "${org}" declared twice from here on`;
      parts.problems.push(problem(where(more), `environments[${more.index}].name`, message, org));
    }
    parts.problems.push(...renameProblems(org, parts, locate));
    if (parts.prune?.value === true) {
      parts.problems.push(...ownerTagProblems(org, parts.prune, parts.envs.values(), locate));
    }
  }
  const byName = <T extends { name: string }>(items: Iterable<T>) =>
    [...items].sort((a, b) => compareNames(a.name, b.name));
  const orgs = [...byOrg.entries()]
    .sort(([a], [b]) => compareNames(a, b))
    .map(([org, parts]): OrgManifest => {
      const valid = parts.problems.length === 0;
      return {
        org,
        environments: valid ? byName(parts.envs.values()) : [],
        files: [...parts.files].sort(compareNames),
        problems: parts.problems,
        ...(parts.policies.size > 0 && { policies: valid ? byName(parts.policies.values()) : [] }),
        ...(parts.prune !== undefined && valid && { prune: parts.prune }),
        ...(parts.suspend && { suspend: parts.suspend }),
      };
    });
  return { orgs, unattributed };
}

/** Two environments renamed from one name, or one renamed from a name the org declares. */
function renameProblems(org: string, parts: OrgParts, locate: Locate): ManifestProblem[] {
  const problems: ManifestProblem[] = [];
  const first = new Map<string, { name: string; at: string }>();
  for (const { env, source } of parts.renames) {
    const { name, renamedFrom = '' } = env;
    const value = { file: source.file, ...locate(source, ['renamed_from']) };
    const path = formatPath(['environments', source.index, 'renamed_from']);
    const holder = parts.first.get(renamedFrom);
    if (holder !== undefined) {
      const message =
        `environment "${name}" of org "${org}" is renamed from "${renamedFrom}", which the org ` +
        `also declares, at ${at(positionOf(holder, locate))}: the rename would take that environment's name away; ` +
        `if "${renamedFrom}" is the environment being renamed, remove its entry, else remove ` +
        'renamed_from';
      problems.push(problem(value, path, message, org));
    }
    const earlier = first.get(renamedFrom);
    if (earlier === undefined) {
      first.set(renamedFrom, { name, at: at(value) });
      continue;
    }
    const message =
      `environment "${name}" of org "${org}" is renamed from "${renamedFrom}", and so is ` +
      `environment "${earlier.name}" at ${earlier.at}: only one environment can ` +
      `take over "${renamedFrom}"; keep renamed_from on the one that was "${renamedFrom}", and ` +
      'remove it from the other';
    problems.push(problem(value, path, message, org));
  }
  return problems;
}

/** While `prune` is on, the ownership tag is envsync's alone (docs/lifecycle.md). */
function ownerTagProblems(
  org: string,
  prune: PruneDeclaration,
  envs: Iterable<DesiredEnvironment>,
  locate: Locate,
): ManifestProblem[] {
  return [...envs].flatMap(({ name, tags, source }) => {
    if (tags === undefined || !Object.hasOwn(tags, OWNER_TAG_KEY) || source === undefined)
      return [];
    const message =
      `tag "${OWNER_TAG_KEY}" of environment "${name}" is envsync's own while org "${org}" ` +
      `has prune: true (at ${at(prune)}): envsync sets ${OWNER_TAG_KEY}: ` +
      `${ownerTagValue(org)} on the environments it creates or updates, to mark those it owns ` +
      'and may archive; remove the key from tags, or rename it';
    const where = { file: source.file, ...locate(source, ['tags'], { key: OWNER_TAG_KEY }) };
    const path = formatPath(['environments', source.index, 'tags', OWNER_TAG_KEY]);
    return [problem(where, path, message, org)];
  });
}
