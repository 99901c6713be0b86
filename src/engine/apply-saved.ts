/**
 * `sync --plan FILE` (docs/cli.md, "Saved plans"): a saved plan is applied exactly, or nothing is
 * sent. First its digest and schema, that it agrees with itself, its API and the manifests; then
 * that the service has not moved since it was made.
 */
import path from 'node:path';
import { quoted } from '../api/response.ts';
import { escapeJson } from '../core/escape.ts';
import { FIELD_LIST, FIELDS, type FieldSpec, type FieldValue, sameValue } from '../core/fields.ts';
import type { ChangeRequests, FieldDiffs, ObservedEnvironment } from '../core/model.ts';
import { hasOwnerTag, OWNER_TAG_KEY, ownerTagValue } from '../core/ownership.ts';
import { samePolicyText } from '../core/policy-documents.ts';
import { changeRequests, sameRequests, withoutRetired } from '../core/requests.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';
import { applyWithPolicyDocuments, textDigest, type UploadDeps } from './policy-documents.ts';
import { failureOf } from '../api/errors.ts';
import {
  commonFailure,
  failureCause,
  type OrgOutcome,
  plural,
  REPORT_VERSION,
  type RunReport,
  summarize,
} from '../core/report.ts';
import { dialectOf, dialectWords } from '../core/dialect.ts';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { READ_LIMITS, readRegularText } from '../runtime/read-file.ts';
import { type ApplyDeps, applyOrgPlan } from './apply.ts';
import {
  describeMove,
  listingDigest,
  orgPlanFromSaved,
  policyDocumentsDigest,
  readSavedPlan,
  type SavedOrg,
  type SavedPlan,
  savedValue,
} from './saved-plan.ts';

type SavedChange = SavedOrg['changes'][number];

/** A value for a message: JSON, unsafe characters escaped, shortened to `max`. */
function shown(value: unknown, max = 80): string {
  const text = escapeJson(JSON.stringify(value ?? null));
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** Where in an org a finding is: `org "acme", environment "web": `. */
const at =
  (org: string) =>
  (name: string, what = 'environment') =>
    `org ${quoted(org)}, ${what} ${quoted(name)}: `;

/** Either perhaps absent. */
const same = (spec: FieldSpec, a: FieldValue | undefined, b: FieldValue | undefined) =>
  a === undefined || b === undefined ? a === b : sameValue(spec, a, b);

const repeated = (names: readonly string[]) => names.filter((name, i) => names.indexOf(name) !== i);

/**
 * The requests a change's fields call for, as the planner decides them from the plan's own
 * listing: its rename, and under `prune` the ownership tag the environment does not carry yet.
 */
function expectedRequests(change: SavedChange, org: SavedOrg): ChangeRequests {
  const renameFrom = change.action === 'rename' ? change.renamedFrom : undefined;
  const entry = org.listing.find((env) => env.name === (renameFrom ?? change.name));
  const owned = entry !== undefined && hasOwnerTag(org.org, entry as ObservedEnvironment);
  const ownerTag =
    org.archives === undefined || owned
      ? undefined
      : { key: OWNER_TAG_KEY, value: ownerTagValue(org.org) };
  const fields = change.fields as FieldDiffs;
  return changeRequests(change.action, fields, org.dialect, { renameFrom, ownerTag });
}

/** One change's disagreements with itself, and with its org's listing. */
function changeProblems(change: SavedChange, org: SavedOrg): string[] {
  const here = at(org.org)(change.name);
  const listed = (name: string) => org.listing.some((env) => env.name === name);
  const problems: string[] = [];
  const from = change.renamedFrom;
  if (change.action !== 'rename' && from !== undefined)
    problems.push('it is not a rename, but names one');
  if (change.action === 'rename' && from === undefined)
    problems.push('a rename that names no old name');
  if (change.action === 'rename' && from !== undefined && (!listed(from) || listed(change.name)))
    problems.push(
      `it renames ${quoted(from)}, but the plan's listing does not have that name alone`,
    );
  if (change.desired.name !== change.name)
    problems.push(`the change sends environment ${quoted(change.desired.name)}`);
  for (const [key, diff] of Object.entries(change.fields as FieldDiffs)) {
    const spec = FIELDS[key as keyof typeof FIELDS] as FieldSpec;
    const sends = savedValue(change.desired, spec);
    if (same(spec, sends, diff.to)) continue;
    const sent = sends === undefined ? 'does not send it' : `sends ${shown(sends)}`;
    problems.push(`${key}: the change ${sent}, but its fields show ${shown(diff.to)}`);
  }
  // The requests are what is sent, the fields what was reviewed.
  const expected = expectedRequests(change, org);
  if (problems.length === 0 && !sameRequests(expected, change.requests as ChangeRequests)) {
    problems.push(
      `it sends ${shown(change.requests, 160)}, but its fields call for ${shown(expected, 160)} in the ${org.dialect} dialect`,
    );
  }
  return problems.map((problem) => here + problem);
}

/**
 * Each change sends what its fields show, once, with the requests they call for; each archive is
 * of a listed environment the plan does not also keep; each upload sends what its fields show.
 */
function selfDisagreements(saved: SavedPlan): string[] {
  const problems: string[] = [];
  for (const org of saved.orgs) {
    const where = at(org.org);
    const names = org.changes.map((c) => c.name);
    for (const name of repeated(names))
      problems.push(`${where(name)}the plan has two changes for it`);
    for (const change of org.changes) problems.push(...changeProblems(change, org));
    const archived = (org.archives ?? []).map((a) => a.name);
    for (const name of repeated(archived))
      problems.push(`${where(name)}the plan archives it twice`);
    const kept = new Set([...names, ...org.unchanged]);
    for (const name of archived) {
      if (kept.has(name)) problems.push(`${where(name)}the plan both archives and keeps it`);
      if (!org.listing.some((env) => env.name === name))
        problems.push(`${where(name)}the plan archives it, but its listing does not have it`);
    }
    const uploads = org.policyDocuments?.changes ?? [];
    for (const name of repeated(uploads.map((c) => c.name)))
      problems.push(`${where(name, 'policy document')}the plan has two uploads for it`);
    for (const { name, fields, content, description } of uploads) {
      const here = where(name, 'policy document');
      if (fields.content !== undefined && fields.content.to !== textDigest(content))
        problems.push(`${here}the upload's text does not hash to the digest its fields show`);
      if (fields.description !== undefined && fields.description.to !== description)
        problems.push(`${here}the upload does not send the description its fields show`);
      if (fields.content === undefined && fields.description === undefined)
        problems.push(`${here}the upload shows no field that differs`);
    }
  }
  return problems;
}

const DOES: Readonly<Record<SavedChange['action'], string>> = {
  create: 'creates it',
  update: 'updates it',
  unverified: 'sends it',
  rename: 'renames it',
};

const differs = (what: string, plan: string, manifests: string) =>
  `${what}: the plan ${plan}, the manifests ${manifests}`;

function orgProblems(org: SavedOrg, manifest: OrgManifest): string[] {
  const count = manifest.problems.length;
  if (count > 0) {
    return [
      `org ${quoted(org.org)}: its manifests have ${plural(count, 'problem')} (run "envsync validate" to see them)`,
    ];
  }
  const where = at(org.org);
  const environments = withoutRetired(manifest.environments, org.dialect);
  const declared = new Map(environments.map((env) => [env.name, env]));
  const problems: string[] = [];
  for (const change of org.changes) {
    const env = declared.get(change.name);
    if (env === undefined) {
      problems.push(
        `${where(change.name)}the plan ${DOES[change.action]}, but no manifest declares it`,
      );
      continue;
    }
    // Every field, whether or not `fields` show it.
    for (const spec of FIELD_LIST) {
      const sends = savedValue(change.desired, spec);
      const wants = env[spec.name];
      if (same(spec, sends, wants)) continue;
      const plan = sends === undefined ? 'does not send it' : `sends ${shown(sends)}`;
      const manifests = wants === undefined ? 'do not declare it' : `declare ${shown(wants)}`;
      problems.push(where(change.name) + differs(spec.name, plan, manifests));
    }
    const from = change.renamedFrom ?? change.renameNotFound;
    if (from !== undefined && env.renamedFrom !== from) {
      const manifests =
        env.renamedFrom === undefined
          ? 'declare no renamed_from'
          : `declare renamed_from ${quoted(env.renamedFrom)}`;
      problems.push(
        `${where(change.name)}the plan renames it from ${quoted(from)}, the manifests ${manifests}`,
      );
    }
  }
  for (const name of org.unchanged) {
    if (!declared.has(name))
      problems.push(`${where(name)}the plan has it unchanged, but no manifest declares it`);
  }
  const prune = manifest.prune?.value === true;
  if (org.archives !== undefined && !prune)
    problems.push(
      `org ${quoted(org.org)}: the plan prunes it, but its manifests do not say "prune: true"`,
    );
  if (org.archives === undefined && prune)
    problems.push(
      `org ${quoted(org.org)}: its manifests say "prune: true", but the plan was made without it`,
    );
  for (const { name } of org.archives ?? []) {
    if (declared.has(name))
      problems.push(`${where(name)}the plan archives it, but the manifests declare it`);
  }
  // Each upload's file holds the text it sends: exactly, when the upload is for the text.
  const documents = new Map((manifest.policies ?? []).map((doc) => [doc.name, doc]));
  for (const change of org.policyDocuments?.changes ?? []) {
    const here = where(change.name, 'policy document');
    const doc = documents.get(change.name);
    if (doc === undefined) {
      problems.push(`${here}the plan uploads it, but no manifest declares it`);
      continue;
    }
    if (doc.description !== change.description) {
      const plan =
        change.description === undefined ? 'sends none' : `sends ${shown(change.description)}`;
      const manifests =
        doc.description === undefined ? 'declare none' : `declare ${shown(doc.description)}`;
      problems.push(here + differs('description', plan, manifests));
    }
    const text =
      change.fields.content === undefined
        ? samePolicyText(doc.content, change.content)
        : doc.content === change.content;
    if (!text) {
      problems.push(
        `${here}its file ${doc.file} no longer holds the text the plan uploads (the plan sends ${textDigest(change.content)}, the file holds ${textDigest(doc.content)})`,
      );
    }
  }
  for (const name of org.policyDocuments?.unchanged ?? []) {
    if (!documents.has(name))
      problems.push(
        `${where(name, 'policy document')}the plan has it unchanged, but no manifest declares it`,
      );
  }
  return problems;
}

/** Every org and environment of the plan is declared, and each change sends exactly that. */
function manifestDisagreements(saved: SavedPlan, manifests: ManifestSet): string[] {
  const byOrg = new Map(manifests.orgs.map((manifest) => [manifest.org, manifest]));
  const unread = manifests.unattributed.length;
  const why =
    unread > 0
      ? ` (${plural(unread, 'file problem')} keep some files from saying their org: run "envsync validate")`
      : '';
  return saved.orgs.flatMap((org) => {
    const manifest = byOrg.get(org.org);
    if (manifest === undefined)
      return [`org ${quoted(org.org)}: no manifest declares this org${why}`];
    return orgProblems(org, manifest);
  });
}

type ApplySavedOptions = ApplyDeps &
  UploadDeps & {
    /** The plan file and the manifests' folder as the user named them (relative to `cwd`). */
    readonly file: string;
    readonly cwd: string;
    readonly apiUrl: URL;
    readonly manifests: ManifestSet;
    readonly manifestsDir: string;
    /** How long reading the plan file may take (--deadline). */
    readonly readTimeoutMs?: number | undefined;
  };

/** Refuses the plan: what is wrong, a finding a line, and what to do. */
function refuse(headline: string, findings: readonly string[], todo: string): void {
  if (findings.length === 0) return;
  const lines = findings.slice(0, 20).map((line) => `  ${line}`);
  if (findings.length > 20) lines.push(`  ... and ${findings.length - 20} more`);
  throw new ConfigError(`refusing to apply ${headline}:\n${lines.join('\n')}\n${todo}`);
}

/** The checks, then the plan applied exactly. */
export async function applySavedPlan(options: ApplySavedOptions): Promise<RunReport> {
  const { file, client, logger } = options;
  const text = await readRegularText(path.resolve(options.cwd, file), {
    subject: `--plan ${file}:`,
    fix: 'point --plan at the file "envsync plan --out" wrote',
    maxBytes: READ_LIMITS.savedPlan,
    limit: 'for a saved plan',
    timeoutMs: options.readTimeoutMs,
  });
  const saved = readSavedPlan(text, file);
  refuse(
    `${file}: a change in it does not send what its fields show, so it is not the plan that was reviewed`,
    selfDisagreements(saved),
    `Nothing was sent. Make the plan again with "envsync plan --out ${file}" and review it.`,
  );
  if (saved.api !== options.apiUrl.href) {
    throw new ConfigError(
      `--plan ${file}: it was made against ${saved.api}, not ${options.apiUrl.href}`,
    );
  }
  refuse(
    `${file}: it does not match the manifests in ${options.manifestsDir} (a plan applies only with the manifests it was made from)`,
    manifestDisagreements(saved, options.manifests),
    `Nothing was sent. Check out the revision the plan was made from, or make the plan again from these manifests ("envsync plan --out ${file}") and review it.`,
  );
  const moved: string[] = [];
  const listed: OrgOutcome[] = [];
  // Each org's live listing: ownership is read from it.
  const listings = new Map<string, readonly ObservedEnvironment[]>();
  await Promise.all(
    saved.orgs.map(async (planned) => {
      const { org, digest, policyDocuments } = planned;
      const move = (what: string) => moved.push(`org ${org}: ${what}`);
      try {
        const live = (await client.listEnvironments(org)).environments;
        listed.push({ org, status: 'ok' });
        listings.set(org, live);
        if (listingDigest(live) !== digest)
          move(describeMove(planned, live).join('; ') || 'the listing changed');
      } catch (error) {
        listed.push({ org, status: 'failed', cause: failureCause(failureOf(error)) });
        move(`cannot list it to check (${errorMessage(error)})`);
        return;
      }
      if (policyDocuments === undefined) return;
      // The listing told the dialect: documents exist only in kosli's.
      if (client.dialect()?.dialect !== 'kosli') {
        move('the plan uploads policy documents, but the API dialect is not kosli');
        return;
      }
      try {
        if (policyDocumentsDigest(await client.listPolicyDocuments(org)) !== policyDocuments.digest)
          move('its policy documents changed on the service');
      } catch (error) {
        move(`cannot list its policy documents to check (${errorMessage(error)})`);
      }
    }),
  );
  // The plan's requests are those of the dialect it was made for: the run must speak it too.
  const now = client.dialect();
  for (const { org, dialect } of saved.orgs) {
    if (now !== undefined && now.dialect !== dialect)
      moved.push(
        `org ${org}: the plan was made for the ${dialect} API dialect, and this run uses ${dialectWords(now)}`,
      );
  }
  // The API could not be reached, or refused the token, for every org: that, once, not "moved".
  const failure = commonFailure(listed);
  if (failure !== undefined) {
    throw new ConfigError(
      `cannot check ${file} against the service: ${failure.message}. ${failure.hint}\nNothing was sent.`,
    );
  }
  refuse(
    `${file}: the service moved since the plan was made, so it is not the plan that was reviewed`,
    moved.sort(),
    'Run "envsync plan" again and review the new plan.',
  );
  // Reviewed: the plan archives what it shows, past --max-archive.
  const deps = { ...options, reviewed: true };
  const reports = await Promise.all(
    saved.orgs.map(async (org) => {
      const plan = orgPlanFromSaved(org);
      const apply = (envPlan: typeof plan) =>
        applyOrgPlan(envPlan, deps, listings.get(org.org) ?? []);
      const documents = org.policyDocuments;
      return (
        documents ? await applyWithPolicyDocuments(plan, documents, deps, apply) : await apply(plan)
      ).report;
    }),
  );
  logger.info({ plan: file, orgs: saved.orgs.length }, 'applied the saved plan');
  return {
    version: REPORT_VERSION,
    dryRun: false,
    summary: { ...summarize(reports), throttledMs: client.throttledMs() },
    ...dialectOf(client),
    orgs: reports,
    errors: [],
  };
}
