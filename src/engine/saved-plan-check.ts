/**
 * What `sync --plan` checks of a saved plan before it sends anything, beside its integrity
 * digest (plan-integrity.ts) and the live listings (apply-saved.ts): that each change sends what
 * its fields show, and that every org and environment of the plan is declared by the manifests
 * it is applied with, with the same values. Each check returns its findings as lines, empty when
 * there is nothing to say.
 */
import { quoted } from '../api/response.ts';
import { escapeJson } from '../core/escape.ts';
import { FIELD_LIST, type FieldSpec, type FieldValue } from '../core/fields.ts';
import type { ApiDialect } from '../core/dialect.ts';
import type { DesiredEnvironment, FieldDiff } from '../core/model.ts';
import { changeRequests, sameRequests, type ChangeRequests } from '../core/requests.ts';
import { acceptsSavedValue, normalizeValue, sameValue, showValue } from '../core/value-kinds.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';
import { requestsOf, savedValue, type SavedPlan } from './saved-plan.ts';
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
function requestsProblem(at: string, change: SavedChange, dialect: ApiDialect): string | undefined {
  const fields: Record<string, FieldDiff> = {};
  for (const [key, diff] of Object.entries(change.fields)) {
    const spec = SPECS.get(key) as FieldSpec;
    const from = diff.from ?? null;
    if (from !== null && !acceptsSavedValue(spec, from)) {
      return `${at}: ${key}: its fields show no value it could be changed from`;
    }
    fields[key] = { from: from as FieldValue | null, to: diff.to as FieldValue };
  }
  const expected = changeRequests(change.action, fields, dialect);
  const sent = requestsOf(change.requests);
  if (sameRequests(expected, sent)) return undefined;
  return `${at}: it sends ${shownRequests(sent)}, but its fields call for ${shownRequests(expected)} in the ${dialect} dialect`;
}

/** One change's disagreements with itself: what it sends against what its fields show. */
function changeProblems(org: string, change: SavedChange, dialect: ApiDialect): string[] {
  const at = where(org, change.name);
  const problems: string[] = [];
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
  const requests = requestsProblem(at, change, dialect);
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
      problems.push(...changeProblems(org.org, change, org.dialect));
    }
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
};

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
