/**
 * What `sync --plan` checks of a saved plan before it sends anything, beside its integrity digest
 * (plan-integrity.ts), its schema (saved-plan.ts) and the live service (apply-saved.ts): that each
 * change sends what its fields show, and that every org, environment and policy document of the
 * plan is declared by the manifests it is applied with, with the same values. Each check returns
 * its findings as lines, empty when there is nothing to say.
 */
import { quoted } from '../api/response.ts';
import { escapeJson } from '../core/escape.ts';
import { FIELD_LIST, FIELDS, type FieldSpec, type FieldValue } from '../core/fields.ts';
import type { ChangeRequests, FieldDiffs, ObservedEnvironment } from '../core/model.ts';
import { hasOwnerTag, OWNER_TAG_KEY, ownerTagValue } from '../core/ownership.ts';
import { samePolicyText } from '../core/policy-documents.ts';
import { changeRequests, sameRequests } from '../core/requests.ts';
import { normalizeValue, sameValue } from '../core/value-kinds.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';
import { textDigest } from './policy-documents.ts';
import { savedValue, type SavedOrg, type SavedPlan } from './saved-plan.ts';

type SavedChange = SavedOrg['changes'][number];
type SavedDocuments = NonNullable<SavedOrg['policyDocuments']>;

/** A value for a message: JSON, unsafe characters escaped, shortened to `max`. */
function shown(value: unknown, max = 80): string {
  const text = escapeJson(JSON.stringify(value ?? null));
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

const where = (org: string, name: string, what = 'environment') =>
  `org ${quoted(org)}, ${what} ${quoted(name)}`;

/** Whether two values of a field (either perhaps absent) are the same. */
function same(spec: FieldSpec, a: FieldValue | undefined, b: FieldValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return sameValue(spec, normalizeValue(spec, a), normalizeValue(spec, b));
}

/** Names that appear more than once. */
const twice = (names: readonly string[]) => names.filter((name, i) => names.indexOf(name) !== i);

/**
 * Whether the change's requests (a PUT or not, the policies and tags sent through their own
 * operations, a rename) are those its fields call for in its org's dialect, as the planner decides
 * them from the plan's own listing: the requests are what is sent, the fields what was reviewed.
 * Under `prune` (an org that carries `archives`) a change also sets the ownership tag, when the
 * environment does not carry it yet.
 */
function requestsProblem(at: string, change: SavedChange, saved: SavedOrg): string[] {
  const renameFrom = change.action === 'rename' ? change.renamedFrom : undefined;
  const entry = saved.listing.find((env) => env.name === (renameFrom ?? change.name));
  const owned =
    entry !== undefined &&
    hasOwnerTag(saved.org, { name: entry.name, tags: entry['tags'] } as ObservedEnvironment);
  const ownerTag =
    saved.archives === undefined || owned
      ? undefined
      : { key: OWNER_TAG_KEY, value: ownerTagValue(saved.org) };
  const fields = change.fields as FieldDiffs;
  const expected = changeRequests(change.action, fields, saved.dialect, { renameFrom, ownerTag });
  if (sameRequests(expected, change.requests as ChangeRequests)) return [];
  return [
    `${at}: it sends ${shown(change.requests, 160)}, but its fields call for ${shown(expected, 160)} in the ${saved.dialect} dialect`,
  ];
}

/** A rename's own disagreements: it renames a listed name to one the listing does not have. */
function renameProblems(at: string, change: SavedChange, saved: SavedOrg): string[] {
  const listed = (name: string) => saved.listing.some((env) => env.name === name);
  if (change.action !== 'rename') {
    return change.renamedFrom === undefined ? [] : [`${at}: it is not a rename, but names one`];
  }
  if (change.renamedFrom === undefined) return [`${at}: a rename that names no old name`];
  if (listed(change.renamedFrom) && !listed(change.name)) return [];
  return [
    `${at}: it renames ${quoted(change.renamedFrom)}, but the plan's listing does not have that name alone`,
  ];
}

/** One change's disagreements with itself: what it sends against what its fields show. */
function changeProblems(change: SavedChange, saved: SavedOrg): string[] {
  const at = where(saved.org, change.name);
  const problems = renameProblems(at, change, saved);
  if (change.desired.name !== change.name) {
    problems.push(`${at}: the change sends environment ${quoted(change.desired.name)}`);
  }
  for (const [key, diff] of Object.entries(change.fields as FieldDiffs)) {
    const spec = FIELDS[key as keyof typeof FIELDS] as FieldSpec;
    const sends = savedValue(change.desired, spec);
    if (!same(spec, sends, diff.to)) {
      const sent = sends === undefined ? 'does not send it' : `sends ${shown(sends)}`;
      problems.push(`${at}: ${key}: the change ${sent}, but its fields show ${shown(diff.to)}`);
    }
  }
  return problems.length > 0 ? problems : requestsProblem(at, change, saved);
}

/** Each upload sends what its fields show: the text's digest, the description. */
function documentProblems(org: string, saved: SavedDocuments): string[] {
  const problems = twice(saved.changes.map((c) => c.name)).map(
    (name) => `${where(org, name, 'policy document')}: the plan has two uploads for it`,
  );
  for (const { name, fields, content, description } of saved.changes) {
    const at = where(org, name, 'policy document');
    if (fields.content !== undefined && fields.content.to !== textDigest(content))
      problems.push(`${at}: the upload's text does not hash to the digest its fields show`);
    if (fields.description !== undefined && fields.description.to !== description)
      problems.push(`${at}: the upload does not send the description its fields show`);
    if (fields.content === undefined && fields.description === undefined)
      problems.push(`${at}: the upload shows no field that differs`);
  }
  return problems;
}

/**
 * Check 1: every field a change's `fields` show has `to` equal to what the change sends, the
 * change sends the environment it names, and its requests are those its fields call for in its
 * org's dialect. Each environment has one change at most; each archive is of a listed
 * environment the plan does not also keep; each upload sends what its fields show.
 */
export function selfDisagreements(saved: SavedPlan): string[] {
  const problems: string[] = [];
  for (const org of saved.orgs) {
    const names = org.changes.map((c) => c.name);
    for (const name of twice(names))
      problems.push(`${where(org.org, name)}: the plan has two changes for it`);
    for (const change of org.changes) problems.push(...changeProblems(change, org));
    const archived = (org.archives ?? []).map((a) => a.name);
    for (const name of twice(archived))
      problems.push(`${where(org.org, name)}: the plan archives it twice`);
    const kept = new Set([...names, ...org.unchanged]);
    for (const name of archived) {
      if (kept.has(name))
        problems.push(`${where(org.org, name)}: the plan both archives and keeps it`);
      if (!org.listing.some((env) => env.name === name))
        problems.push(
          `${where(org.org, name)}: the plan archives it, but its listing does not have it`,
        );
    }
    if (org.policyDocuments) problems.push(...documentProblems(org.org, org.policyDocuments));
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

/**
 * Each upload agrees with the manifests: the document is declared with the same description, and
 * its file holds the text the upload sends (exactly, when the upload is for the text).
 */
function documentManifestProblems(saved: SavedDocuments, manifest: OrgManifest): string[] {
  const declared = new Map((manifest.policies ?? []).map((doc) => [doc.name, doc]));
  const problems: string[] = [];
  for (const change of saved.changes) {
    const at = where(manifest.org, change.name, 'policy document');
    const doc = declared.get(change.name);
    if (doc === undefined) {
      problems.push(`${at}: the plan uploads it, but no manifest declares it`);
      continue;
    }
    if (doc.description !== change.description) {
      const plan =
        change.description === undefined ? 'sends none' : `sends ${shown(change.description)}`;
      const manifests =
        doc.description === undefined ? 'declare none' : `declare ${shown(doc.description)}`;
      problems.push(`${at}: description: the plan ${plan}, the manifests ${manifests}`);
    }
    const sameText =
      change.fields.content === undefined
        ? samePolicyText(doc.content, change.content)
        : doc.content === change.content;
    if (!sameText) {
      problems.push(
        `${at}: its file ${doc.file} no longer holds the text the plan uploads (the plan sends ${textDigest(change.content)}, the file holds ${textDigest(doc.content)})`,
      );
    }
  }
  for (const name of saved.unchanged) {
    if (!declared.has(name))
      problems.push(
        `${where(manifest.org, name, 'policy document')}: the plan has it unchanged, but no manifest declares it`,
      );
  }
  return problems;
}

/** One org of the plan against its manifests. */
function orgProblems(saved: SavedOrg, manifest: OrgManifest): string[] {
  const org = saved.org;
  const count = manifest.problems.length;
  if (count > 0) {
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
      continue;
    }
    // Every field, whether or not the change's `fields` show it.
    for (const spec of FIELD_LIST) {
      const sends = savedValue(change.desired, spec);
      const wants = env[spec.name];
      if (same(spec, sends, wants)) continue;
      const plan = sends === undefined ? 'does not send it' : `sends ${shown(sends)}`;
      const manifests = wants === undefined ? 'do not declare it' : `declare ${shown(wants)}`;
      problems.push(
        `${where(org, change.name)}: ${spec.name}: the plan ${plan}, the manifests ${manifests}`,
      );
    }
    // The plan's renames against the manifests' `renamed_from`.
    const from = change.renamedFrom ?? change.renameNotFound;
    if (from !== undefined && env.renamedFrom !== from) {
      const manifests =
        env.renamedFrom === undefined
          ? 'declare no renamed_from'
          : `declare renamed_from ${quoted(env.renamedFrom)}`;
      problems.push(
        `${where(org, change.name)}: the plan renames it from ${quoted(from)}, the manifests ${manifests}`,
      );
    }
  }
  for (const name of saved.unchanged) {
    if (!declared.has(name))
      problems.push(`${where(org, name)}: the plan has it unchanged, but no manifest declares it`);
  }
  // Its archives against the manifests' `prune`.
  const prune = manifest.prune?.value === true;
  if (saved.archives !== undefined && !prune)
    problems.push(
      `org ${quoted(org)}: the plan prunes it, but its manifests do not say "prune: true"`,
    );
  if (saved.archives === undefined && prune)
    problems.push(
      `org ${quoted(org)}: its manifests say "prune: true", but the plan was made without it`,
    );
  for (const { name } of saved.archives ?? []) {
    if (declared.has(name))
      problems.push(`${where(org, name)}: the plan archives it, but the manifests declare it`);
  }
  if (saved.policyDocuments)
    problems.push(...documentManifestProblems(saved.policyDocuments, manifest));
  return problems;
}

/**
 * Check 2: every org and environment of the plan is declared by `manifests`, and each change
 * sends exactly what they declare (every field, whether or not its `fields` show it).
 */
export function manifestDisagreements(saved: SavedPlan, manifests: ManifestSet): string[] {
  const byOrg = new Map(manifests.orgs.map((manifest) => [manifest.org, manifest]));
  const unread = manifests.unattributed.length;
  const why =
    unread > 0
      ? ` (${unread} file problem${unread === 1 ? '' : 's'} keep some files from saying their org: run "envsync validate")`
      : '';
  return saved.orgs.flatMap((org) => {
    const manifest = byOrg.get(org.org);
    return manifest === undefined
      ? [`org ${quoted(org.org)}: no manifest declares this org${why}`]
      : orgProblems(org, manifest);
  });
}
