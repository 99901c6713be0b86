/**
 * What `sync --plan` checks of a saved plan before it sends anything, beside its integrity
 * digest (plan-integrity.ts) and the live listings (apply-saved.ts): that each change sends what
 * its fields show, and that every org and environment of the plan is declared by the manifests
 * it is applied with, with the same values. Each check returns its findings as lines, empty when
 * there is nothing to say.
 */
import { quoted } from '../api/response.ts';
import { escapeJson } from '../core/escape.ts';
import {
  acceptsSavedValue,
  FIELD_LIST,
  type FieldSpec,
  type FieldValue,
  normalizeValue,
  sameValue,
  showValue,
} from '../core/fields.ts';
import type { ApiDialect } from '../core/dialect.ts';
import type {
  ChangeRequests,
  DesiredEnvironment,
  FieldDiff,
  ObservedEnvironment,
} from '../core/model.ts';
import { hasOwnerTag, OWNER_TAG_KEY, ownerTagValue } from '../core/ownership.ts';
import { changeRequests, type RequestExtras, sameRequests } from '../core/requests.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';
import { requestsOf, type SavedPlan, savedValue } from './saved-plan.ts';
import {
  documentManifestDisagreements,
  documentSelfDisagreements,
} from './saved-plan-documents.ts';

type SavedOrg = SavedPlan['orgs'][number];
type SavedChange = SavedOrg['changes'][number];

const SPECS: ReadonlyMap<string, FieldSpec> = new Map(FIELD_LIST.map((spec) => [spec.name, spec]));

/** A value for a message: JSON, unsafe characters escaped, shortened. */
function shown(value: FieldValue | null | undefined): string {
  const text = escapeJson(showValue(value ?? null));
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Where in the plan: the org and the environment, quoted. */
function where(org: string, name: string): string {
  return `org ${quoted(org)}, environment ${quoted(name)}`;
}

/** Whether two values of a field (either perhaps absent) are the same. */
function same(spec: FieldSpec, a: FieldValue | undefined, b: FieldValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return sameValue(spec, normalizeValue(spec, a), normalizeValue(spec, b));
}

/** A value's requests for a message: JSON, unsafe characters escaped, shortened. */
function shownRequests(requests: ChangeRequests): string {
  const text = escapeJson(JSON.stringify(requests));
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/**
 * Whether the change's requests (a PUT or not, the policies and tags sent through their own
 * operations) are those its fields call for in the org's dialect: the requests are what is sent,
 * the fields what was reviewed. Undefined when they agree.
 */
function requestsProblem(at: string, change: SavedChange, saved: SavedOrg): string | undefined {
  const dialect: ApiDialect = saved.dialect;
  const fields: Record<string, FieldDiff> = {};
  for (const [key, diff] of Object.entries(change.fields)) {
    const spec = SPECS.get(key) as FieldSpec;
    const from = diff.from ?? null;
    if (from !== null && !acceptsSavedValue(spec, from)) {
      return `${at}: ${key}: its fields show no value it could be changed from`;
    }
    fields[key] = { from: from as FieldValue | null, to: diff.to as FieldValue };
  }
  const expected = changeRequests(change.action, fields, dialect, extrasOf(change, saved));
  const sent = requestsOf(change.requests);
  if (sameRequests(expected, sent)) return undefined;
  return `${at}: it sends ${shownRequests(sent)}, but its fields call for ${shownRequests(expected)} in the ${dialect} dialect`;
}

/**
 * What the change sends beside its fields, as the planner decides it from the plan's own listing:
 * the rename of a `rename`, and under `prune` (an org that carries `archives`) the ownership tag
 * when the environment does not carry it yet.
 */
function extrasOf(change: SavedChange, saved: SavedOrg): RequestExtras {
  const renameFrom = change.action === 'rename' ? change.renamedFrom : undefined;
  if (saved.archives === undefined) return { renameFrom };
  const entry = saved.listing.find((env) => env.name === (renameFrom ?? change.name));
  const owned =
    entry !== undefined &&
    hasOwnerTag(saved.org, { name: entry.name, tags: entry['tags'] } as ObservedEnvironment);
  return {
    renameFrom,
    ownerTag: owned ? undefined : { key: OWNER_TAG_KEY, value: ownerTagValue(saved.org) },
  };
}

/** A rename's own disagreements: it renames a listed name to one the listing does not have. */
function renameProblems(at: string, change: SavedChange, saved: SavedOrg): string[] {
  const listed = (name: string) => saved.listing.some((env) => env.name === name);
  if (change.action !== 'rename') {
    return change.renamedFrom === undefined ? [] : [`${at}: it is not a rename, but names one`];
  }
  if (change.renamedFrom === undefined) return [`${at}: a rename that names no old name`];
  if (!listed(change.renamedFrom) || listed(change.name)) {
    return [
      `${at}: it renames ${quoted(change.renamedFrom)}, but the plan's listing does not have that name alone`,
    ];
  }
  return [];
}

/** An org's archives against its own listing and changes: each listed, and none also changed. */
function archiveProblems(saved: SavedOrg): string[] {
  const problems: string[] = [];
  const planned = new Set([...saved.changes.map((c) => c.name), ...saved.unchanged]);
  const seen = new Set<string>();
  for (const { name } of saved.archives ?? []) {
    const at = where(saved.org, name);
    if (seen.has(name)) problems.push(`${at}: the plan archives it twice`);
    seen.add(name);
    if (planned.has(name)) problems.push(`${at}: the plan both archives and keeps it`);
    if (!saved.listing.some((env) => env.name === name))
      problems.push(`${at}: the plan archives it, but its listing does not have it`);
  }
  return problems;
}

/** One change's disagreements with itself: what it sends against what its fields show. */
function changeProblems(change: SavedChange, saved: SavedOrg): string[] {
  const org = saved.org;
  const at = where(org, change.name);
  const problems: string[] = [...renameProblems(at, change, saved)];
  if (change.desired.name !== change.name) {
    problems.push(`${at}: the change sends environment ${quoted(change.desired.name)}`);
  }
  for (const [key, diff] of Object.entries(change.fields)) {
    const spec = SPECS.get(key);
    if (spec === undefined) {
      problems.push(`${at}: its fields show ${quoted(key)}, which is not a field`);
      continue;
    }
    const sends = savedValue(change.desired, spec);
    if (!acceptsSavedValue(spec, diff.to)) {
      problems.push(`${at}: ${key}: its fields show no value it could send`);
    } else if (!same(spec, sends, diff.to as FieldValue)) {
      const sent = sends === undefined ? 'does not send it' : `sends ${shown(sends)}`;
      problems.push(
        `${at}: ${key}: the change ${sent}, but its fields show ${shown(diff.to as FieldValue)}`,
      );
    }
  }
  if (problems.length > 0) return problems;
  const requests = requestsProblem(at, change, saved);
  return requests === undefined ? [] : [requests];
}

/**
 * Check 1: every field a change's `fields` show has `to` equal to what the change sends, the
 * change sends the environment it names, and its requests are those its fields call for in its
 * org's dialect. Each environment has one change at most.
 */
export function selfDisagreements(saved: SavedPlan): string[] {
  const problems: string[] = [];
  for (const org of saved.orgs) {
    const seen = new Set<string>();
    for (const change of org.changes) {
      if (seen.has(change.name))
        problems.push(`${where(org.org, change.name)}: the plan has two changes for it`);
      seen.add(change.name);
      problems.push(...changeProblems(change, org));
    }
    problems.push(...archiveProblems(org));
    if (org.policyDocuments !== undefined) {
      problems.push(...documentSelfDisagreements(org.org, org.policyDocuments));
    }
  }
  return problems;
}

/** What the plan sends and what the manifests declare, field by field, where they differ. */
function valueProblems(org: string, change: SavedChange, declared: DesiredEnvironment): string[] {
  const problems: string[] = [];
  for (const spec of FIELD_LIST) {
    const sends = savedValue(change.desired, spec);
    const wants = declared[spec.name];
    if (same(spec, sends, wants)) continue;
    const plan = sends === undefined ? 'does not send it' : `sends ${shown(sends)}`;
    const manifests = wants === undefined ? 'do not declare it' : `declare ${shown(wants)}`;
    problems.push(
      `${where(org, change.name)}: ${spec.name}: the plan ${plan}, the manifests ${manifests}`,
    );
  }
  return problems;
}

/** What a change of each action does, in a message. */
const DOES: Readonly<Record<SavedChange['action'], string>> = {
  create: 'creates it',
  update: 'updates it',
  unverified: 'sends it',
  rename: 'renames it',
};

/** The plan's renames and archives against what the manifests say (`renamed_from`, `prune`). */
function lifecycleProblems(saved: SavedOrg, manifest: OrgManifest): string[] {
  const org = saved.org;
  const problems: string[] = [];
  const declared = new Map(manifest.environments.map((env) => [env.name, env]));
  for (const change of saved.changes) {
    const env = declared.get(change.name);
    const from = change.renamedFrom ?? change.renameNotFound;
    if (env !== undefined && from !== undefined && env.renamedFrom !== from) {
      problems.push(
        `${where(org, change.name)}: the plan renames it from ${quoted(from)}, the manifests ${env.renamedFrom === undefined ? 'declare no renamed_from' : `declare renamed_from ${quoted(env.renamedFrom)}`}`,
      );
    }
  }
  const prune = manifest.prune?.value === true;
  if (saved.archives !== undefined && !prune) {
    problems.push(
      `org ${quoted(org)}: the plan prunes it, but its manifests do not say "prune: true"`,
    );
  } else if (saved.archives === undefined && prune) {
    problems.push(
      `org ${quoted(org)}: its manifests say "prune: true", but the plan was made without it`,
    );
  }
  for (const { name } of saved.archives ?? []) {
    if (declared.has(name))
      problems.push(`${where(org, name)}: the plan archives it, but the manifests declare it`);
  }
  return problems;
}

/** One org of the plan against its manifests. */
function orgProblems(saved: SavedOrg, manifest: OrgManifest): string[] {
  const org = saved.org;
  if (manifest.problems.length > 0) {
    const count = manifest.problems.length;
    return [
      `org ${quoted(org)}: its manifests have ${count} problem${count === 1 ? '' : 's'} (run "envsync validate" to see them)`,
    ];
  }
  const declared = new Map(manifest.environments.map((env) => [env.name, env]));
  const problems: string[] = [];
  for (const change of saved.changes) {
    const env = declared.get(change.name);
    if (env === undefined) {
      problems.push(
        `${where(org, change.name)}: the plan ${DOES[change.action]}, but no manifest declares it`,
      );
    } else problems.push(...valueProblems(org, change, env));
  }
  for (const name of saved.unchanged) {
    if (!declared.has(name))
      problems.push(`${where(org, name)}: the plan has it unchanged, but no manifest declares it`);
  }
  if (saved.policyDocuments !== undefined) {
    problems.push(...documentManifestDisagreements(saved.policyDocuments, manifest));
  }
  problems.push(...lifecycleProblems(saved, manifest));
  return problems;
}

/**
 * Check 2: every org and environment of the plan is declared by `manifests`, and each change
 * sends exactly what they declare (every field, whether or not its `fields` show it).
 */
export function manifestDisagreements(saved: SavedPlan, manifests: ManifestSet): string[] {
  const byOrg = new Map(manifests.orgs.map((manifest) => [manifest.org, manifest]));
  const problems: string[] = [];
  for (const org of saved.orgs) {
    const manifest = byOrg.get(org.org);
    if (manifest === undefined) {
      const unread = manifests.unattributed.length;
      problems.push(
        `org ${quoted(org.org)}: no manifest declares this org` +
          (unread > 0
            ? ` (${unread} file problem${unread === 1 ? '' : 's'} keep some files from saying their org: run "envsync validate")`
            : ''),
      );
    } else problems.push(...orgProblems(org, manifest));
  }
  return problems;
}
