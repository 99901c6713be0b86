/**
 * Merging parsed files into organizations: an org may be served by several files and documents,
 * and the same environment name twice in one org is an error that names both places (so are
 * clashing renames and `prune:` values: org-checks.ts).
 */

import type { DesiredEnvironment, SourceLocation } from '../core/model.ts';
import { compareNames } from '../core/names.ts';
import type { DeclaredPolicyDocument } from '../core/policy-documents.ts';
import {
  ownerTagProblems,
  flagConflict,
  renameProblems,
  repeatedName,
  repeatedPolicy,
  type Locate,
  type RenamedEnvironment,
} from './org-checks.ts';
import type { ManifestProblem, ParsedManifest, PruneEntry } from './parse.ts';

export type { Locate } from './org-checks.ts';

/** Everything the manifests declare for one organization, and what is wrong with it. */
export interface OrgManifest {
  readonly org: string;
  /** Sorted by name. Empty when the org has problems: an invalid org is left alone entirely. */
  readonly environments: readonly DesiredEnvironment[];
  /** The files that serve the org: its manifests, and the policy files they name. */
  readonly files: readonly string[];
  readonly problems: readonly ManifestProblem[];
  /**
   * The policy documents the org's manifests declare (top-level `policies:`), their files read,
   * sorted by name; absent when none. Empty when the org has problems.
   */
  readonly policies?: readonly DeclaredPolicyDocument[] | undefined;
  /**
   * The org's `prune:` key, where one of its documents declares it (the first, in the order the
   * files are read: every document that declares it agrees, or the org has a problem). Absent
   * when none declares it: prune is off. Absent too when the org has problems, like its
   * environments: an invalid org is left alone, and an empty list with prune on would read as
   * "archive everything envsync owns".
   */
  readonly prune?: PruneDeclaration | undefined;
  /**
   * The org's `suspend:` key, read as `prune` is: every document that declares it agrees, or the
   * org has a problem. Absent when none declares it: the org is not suspended.
   */
  readonly suspend?: PruneDeclaration | undefined;
}

/** An org's `prune:` or `suspend:` as declared, and where (for a message that refuses it). */
export interface PruneDeclaration extends PruneEntry {
  readonly file: string;
  /** The YAML path: the key, `prune` or `suspend`. */
  readonly path: string;
}

/** One file's parse, as assembleOrgs reads it. */
export interface ParsedFile {
  readonly file: string;
  readonly documents: ParsedManifest['documents'];
  readonly problems: readonly ManifestProblem[];
  readonly declared?: ParsedManifest['declared'];
  /** Some other YAML, skipped: it declares nothing (parsed.ts, ParseOptions). */
  readonly notManifest?: ParsedManifest['notManifest'];
}

/** Where a name was first declared by a document that is not valid. */
interface FirstDeclared {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/**
 * Where an environment was declared: the parser records it; an environment built otherwise (a
 * test's) is at entry `index` of document `document` of the file's documents.
 */
export function sourceOf(
  env: DesiredEnvironment,
  file: string,
  document: number,
  index: number,
): SourceLocation {
  return env.source ?? { file, document, index };
}

/**
 * Where each environment was declared, by identity: built only when a name is declared twice (the
 * rare message that names both places), once, however many repeats there are.
 */
export function sourceIndex(
  parsed: readonly ParsedFile[],
): Map<DesiredEnvironment, SourceLocation> {
  const index = new Map<DesiredEnvironment, SourceLocation>();
  for (const file of parsed) {
    for (const [d, doc] of file.documents.entries()) {
      for (const [i, env] of doc.environments.entries()) {
        index.set(env, sourceOf(env, file.file, d, i));
      }
    }
  }
  return index;
}

/** Names declared twice that are reported one by one, per org; the rest are counted. */
const MAX_REPEATS_SHOWN = 5;

/** Merges parsed documents into orgs, flagging names declared twice with both places. */
export function assembleOrgs(
  parsed: readonly ParsedFile[],
  locate: Locate = (source) => ({ line: source.line ?? 1, column: source.column ?? 1 }),
): { orgs: OrgManifest[]; unattributed: ManifestProblem[] } {
  const byOrg = new Map<
    string,
    {
      envs: Map<string, DesiredEnvironment>;
      /** Names invalid documents declare: a repeat of one is reported with their problems. */
      invalid: Map<string, FirstDeclared>;
      files: Set<string>;
      problems: ManifestProblem[];
      /** Names declared twice, and where the first one not shown was. */
      repeats: number;
      moreRepeats?: SourceLocation;
      policies?: Map<string, DeclaredPolicyDocument>;
      /** The environments that declare `renamed_from` (few), checked once the org is whole. */
      renames?: RenamedEnvironment[];
      /** The first `prune:` its documents declare. */
      prune?: PruneDeclaration;
      /** The first `suspend:` its documents declare. */
      suspend?: PruneDeclaration;
    }
  >();
  const unattributed: ManifestProblem[] = [];
  let sources: Map<DesiredEnvironment, SourceLocation> | undefined;
  const entry = (org: string) => {
    let value = byOrg.get(org);
    if (value === undefined) {
      value = { envs: new Map(), invalid: new Map(), files: new Set(), problems: [], repeats: 0 };
      byOrg.set(org, value);
    }
    return value;
  };
  for (const file of parsed) {
    for (const problem of file.problems) {
      if (problem.org === undefined) unattributed.push(problem);
      else {
        const org = entry(problem.org);
        org.problems.push(problem);
        org.files.add(problem.file);
      }
    }
    for (const [d, doc] of file.documents.entries()) {
      const org = entry(doc.org);
      org.files.add(file.file);
      for (const key of ['prune', 'suspend'] as const) {
        const declared = doc[key];
        if (declared === undefined) continue;
        const here = { ...declared, file: file.file, path: key };
        const first = org[key];
        if (first === undefined) org[key] = here;
        else if (first.value !== here.value)
          org.problems.push(flagConflict(key, here, first, doc.org));
      }
      for (const policy of doc.policyDocuments ?? []) {
        // A policy file serves the org too: an edit of it alone is a change of the org's manifests.
        org.files.add(policy.file);
        org.policies ??= new Map();
        const first = org.policies.get(policy.name);
        if (first === undefined) org.policies.set(policy.name, policy);
        else org.problems.push(repeatedPolicy(policy, first, doc.org));
      }
      for (const [index, env] of doc.environments.entries()) {
        const first = org.envs.get(env.name);
        const firstInvalid = first === undefined ? org.invalid.get(env.name) : undefined;
        if (first === undefined && firstInvalid === undefined) {
          org.envs.set(env.name, env);
          const { renamedFrom } = env;
          if (renamedFrom !== undefined) {
            const source = sourceOf(env, file.file, d, index);
            (org.renames ??= []).push({ name: env.name, renamedFrom, source });
          }
          continue;
        }
        const source = sourceOf(env, file.file, d, index);
        org.repeats++;
        if (org.repeats > MAX_REPEATS_SHOWN) {
          // One broken file says so in a few lines, not thousands: the rest are counted.
          org.moreRepeats ??= source;
          continue;
        }
        const here = locate(source);
        sources ??= sourceIndex(parsed);
        const firstSource = first === undefined ? undefined : sources.get(first);
        const there =
          firstInvalid ??
          (firstSource === undefined ? undefined : { ...firstSource, ...locate(firstSource) });
        org.problems.push(repeatedName(env.name, doc.org, { ...source, ...here }, there));
      }
    }
    // Names of documents that are not valid: a repeat is reported now, with their problems.
    for (const name of file.declared ?? []) {
      const org = entry(name.org);
      const first = org.envs.get(name.name);
      const firstInvalid = org.invalid.get(name.name);
      if (first === undefined && firstInvalid === undefined) {
        org.invalid.set(name.name, { file: file.file, line: name.line, column: name.column });
        continue;
      }
      org.repeats++;
      const source: SourceLocation = { file: file.file, ...name };
      if (org.repeats > MAX_REPEATS_SHOWN) {
        org.moreRepeats ??= source;
        continue;
      }
      sources ??= sourceIndex(parsed);
      const firstSource = first === undefined ? undefined : sources.get(first);
      const there =
        firstInvalid ??
        (firstSource === undefined ? undefined : { ...firstSource, ...locate(firstSource) });
      org.problems.push(
        repeatedName(
          name.name,
          name.org,
          { ...source, line: name.line, column: name.column },
          there,
        ),
      );
    }
  }
  for (const [org, value] of byOrg) {
    const source = value.moreRepeats;
    if (source === undefined) continue;
    const here = locate(source);
    const more = value.repeats - MAX_REPEATS_SHOWN;
    value.problems.push({
      file: source.file,
      line: here.line,
      column: here.column,
      path: `environments[${source.index}].name`,
      message: `... and ${more} more environment name(s) of org "${org}" declared twice from here on`,
      org,
    });
  }
  for (const [org, value] of byOrg) {
    // Where an environment was declared: for the few messages that name another one.
    const placeOf = (env: DesiredEnvironment) => {
      sources ??= sourceIndex(parsed);
      return sources.get(env);
    };
    if (value.renames !== undefined) {
      const declared = (name: string) => {
        const env = value.envs.get(name);
        const source = env === undefined ? undefined : placeOf(env);
        return source === undefined ? value.invalid.get(name) : { ...source, ...locate(source) };
      };
      value.problems.push(...renameProblems(org, value.renames, declared, locate));
    }
    if (value.prune?.value === true) {
      value.problems.push(
        ...ownerTagProblems(org, value.prune, value.envs.values(), placeOf, locate),
      );
    }
  }
  const orgs = [...byOrg.entries()]
    .sort(([a], [b]) => compareNames(a, b))
    .map(([org, value]): OrgManifest => ({
      org,
      environments:
        value.problems.length > 0
          ? []
          : [...value.envs.values()].sort((a, b) => compareNames(a.name, b.name)),
      files: [...value.files].sort(compareNames),
      problems: value.problems,
      ...(value.policies === undefined
        ? {}
        : {
            policies:
              value.problems.length > 0
                ? []
                : [...value.policies.values()].sort((a, b) => compareNames(a.name, b.name)),
          }),
      ...(value.prune === undefined || value.problems.length > 0 ? {} : { prune: value.prune }),
      ...(value.suspend === undefined ? {} : { suspend: value.suspend }),
    }));
  return { orgs, unattributed };
}
