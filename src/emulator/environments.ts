/** The environments' routes (docs/emulator.md; the reasons in docs/api-behaviour.md). */
import { z } from 'zod';
import { shownSegment, type ApiDeps, type Call } from './access.ts';
import { decodeSegment, sendError, sendJson, wholeParameter } from './http.ts';
import type { StoredEnvironment } from './store-document.ts';
import { byName, type EnvironmentInput } from './store.ts';
import {
  expected,
  jsonObject,
  NAME_PATTERN,
  NAME_RULE,
  nameSchema,
  readChecked,
  sendInvalid,
  stringList,
} from './validation.ts';

const SPEC_TYPES = ['K8S', 'S3', 'logical'];
const KOSLI_TYPES = [...SPEC_TYPES, 'ECS', 'lambda', 'server', 'docker', 'azure-apps', 'cloud-run'];
const text = z.string({ error: expected('a string') });
const flag = z.boolean({ error: expected('a boolean') });
const typeIn = (types: readonly string[]) =>
  text.refine((type) => types.includes(type), {
    error: ({ input }) => `'${String(input)}' is not one of ${types.join(', ')}`,
  });

/** The kosli profile reads `null` for an optional field as "not given". */
const orNull = <T>(schema: z.ZodType<T>) =>
  schema.nullish().transform((value) => value ?? undefined);

const memberList = stringList('a list of environment names').superRefine((list, ctx) => {
  const problem = list.find((name, i) => !NAME_PATTERN.test(name) || list.indexOf(name) !== i);
  if (problem === undefined) return;
  ctx.addIssue({
    code: 'custom',
    message: NAME_PATTERN.test(problem)
      ? `'${problem}' is listed more than once`
      : `'${problem}' ${NAME_RULE}`,
  });
});

const onlyLogical = (type: string): string =>
  `only a logical environment includes others; this one is of type '${type}'`;

const SPEC_PUT = jsonObject({
  name: nameSchema,
  description: text,
  type: typeIn(SPEC_TYPES),
  include_scaling: flag.optional(),
  policies: stringList('an array of strings').optional(),
});

const KOSLI_PUT = jsonObject({
  name: nameSchema,
  description: text,
  type: typeIn(KOSLI_TYPES),
  include_scaling: orNull(flag),
  require_provenance: orNull(flag),
  policies: orNull(stringList('an array of strings or null')),
  included_environments: orNull(memberList),
}).superRefine(({ type, included_environments: included }, ctx) => {
  if (included !== undefined && type !== 'logical')
    ctx.addIssue({ code: 'custom', path: ['included_environments'], message: onlyLogical(type) });
});

const PATCH = jsonObject({
  description: text,
  include_scaling: flag,
  included_environments: memberList,
}).partial();

function listingEntry(env: StoredEnvironment): Record<string, unknown> {
  const { archived: _archived, require_provenance: _provenance, ...entry } = env;
  const attached = env.policies?.length ? env.policies : null;
  return { ...entry, include_scaling: false, policies: attached };
}

function detail(env: StoredEnvironment): Record<string, unknown> {
  return { ...listingEntry(env), require_provenance: env.require_provenance };
}

/** The live environment the path names (a copy), or undefined once answered (400 or 404). */
export function liveEnvironment(call: Call): StoredEnvironment | undefined {
  const { res, org, name: rawName, deps } = call;
  const name = decodeSegment(rawName);
  const shown = shownSegment(name ?? rawName, call);
  if (name === undefined || !NAME_PATTERN.test(name)) {
    sendError(res, 400, `Environment name '${shown}' ${NAME_RULE}`);
    return undefined;
  }
  const env = deps.store.get(org, name);
  if (env !== undefined) return env;
  const why = deps.store.isArchived(org, name)
    ? `in organization '${org}' has been archived`
    : `does not exist for organization '${org}'`;
  sendError(res, 404, `Environment named '${shown}' ${why}`);
  return undefined;
}

/** PUT /api/v2/environments/{org}: a create may meet a drawn 409, and holds its name a while. */
export async function putEnvironment({ req, res, org, deps, conflict }: Call): Promise<void> {
  const schema: z.ZodType<EnvironmentInput> = deps.profile === 'kosli' ? KOSLI_PUT : SPEC_PUT;
  const input = await readChecked(req, res, schema);
  if (input === undefined) return;
  const ms = deps.faults().createHoldMs;
  const wait = () => (ms > 0 ? deps.hold(ms) : Promise.resolve());
  const creating = deps.store.get(org, input.name) === undefined;
  if (creating && (conflict() || !(await deps.store.holding(org, input.name, wait)))) {
    const message = `Environment named '${input.name}' is being created by another request in organization '${org}'; try again`;
    return sendError(res, 409, message);
  }
  // Checked and applied in one synchronous step, so no request can archive a member between.
  const list = input.included_environments;
  const problem = list === undefined ? undefined : deps.store.membersProblem(org, input.name, list);
  if (problem !== undefined) return sendInvalid(res, { included_environments: problem });
  deps.store.upsert(org, input, deps.profile);
  sendJson(res, 201, 'OK');
}

export async function patchEnvironment(call: Call): Promise<void> {
  const { req, res, org, deps } = call;
  const change = await readChecked(req, res, PATCH, { status: 422 });
  if (change === undefined) return;
  const env = liveEnvironment(call);
  if (env === undefined) return;
  const { include_scaling: _retired, ...fields } = change;
  const members = fields.included_environments;
  if (members !== undefined) {
    const problem =
      env.type === 'logical'
        ? deps.store.membersProblem(org, env.name, members)
        : onlyLogical(env.type);
    if (problem !== undefined) return sendInvalid(res, { included_environments: problem }, 422);
  }
  const updated = deps.store.update(org, env.name, fields);
  if (updated !== undefined) sendJson(res, 200, detail(updated));
}

export function readEnvironment(call: Call): void {
  const env = liveEnvironment(call);
  if (env !== undefined) sendJson(call.res, 200, detail(env));
}

export async function archiveEnvironment(call: Call): Promise<void> {
  const { req, res, org, deps } = call;
  if ((await readChecked(req, res, jsonObject({}), { emptyIsObject: true })) === undefined) return;
  const env = liveEnvironment(call);
  if (env === undefined) return;
  deps.store.archive(org, env.name);
  sendJson(res, 200, 'OK');
}

/** A name a live environment holds is a 400, not a 409: clients retry a 409, this does not pass. */
export async function renameEnvironment(call: Call): Promise<void> {
  const { req, res, org, deps } = call;
  const body = await readChecked(req, res, jsonObject({ new_name: nameSchema }));
  if (body === undefined) return;
  const env = liveEnvironment(call);
  if (env === undefined) return;
  if (deps.store.rename(org, env.name, body.new_name)) return sendJson(res, 200, 'OK');
  const taken = `an environment named '${body.new_name}' already exists in organization '${org}'`;
  sendInvalid(res, { new_name: taken });
}

const own = <T>(record: Record<string, T[]>, key: string): T[] =>
  Object.hasOwn(record, key) ? (record[key] ?? []) : [];

/** The org's entries with the listing faults (docs/emulator.md, "Fault injection"). */
function withListingFaults(entries: Record<string, unknown>[], org: string, deps: ApiDeps) {
  const { listingExtra, listingOmitOrg, placeholders } = deps.faults();
  const hidden = [...own(placeholders, '*'), ...own(placeholders, org)];
  const shown = entries.map(({ org: _org, ...entry }) => {
    if (hidden.includes(String(entry['name'])))
      return { org, name: entry['name'], placeholder: true, error: 'record could not be rendered' };
    return listingOmitOrg ? entry : { org, ...entry };
  });
  const extra = own(listingExtra, org);
  return extra.length === 0 ? shown : [...shown, ...extra].sort(byName);
}

export function listEnvironments({ res, org, query, deps }: Call): void {
  const environments = deps.store.list(org);
  if (deps.profile === 'spec') {
    const env = environments.map(({ name, type, description }) => ({ name, type, description }));
    return sendJson(res, 200, { env: withListingFaults(env, org, deps) });
  }
  const listed = withListingFaults(environments.map(listingEntry), org, deps);
  if (!query.has('page') && !query.has('per_page')) return sendJson(res, 200, listed);
  const page = wholeParameter(query, 'page', 1);
  const perPage = wholeParameter(query, 'per_page', 20, 50);
  if (page === undefined || perPage === undefined) {
    const errors = {
      ...(page === undefined ? { page: 'must be a whole number from 1' } : {}),
      ...(perPage === undefined ? { per_page: 'must be a whole number from 1 to 50' } : {}),
    };
    return sendError(res, 400, 'Invalid query parameters', { errors });
  }
  const start = (page - 1) * perPage;
  const href = `${deps.baseUrl()}/api/v2/environments/${encodeURIComponent(org)}?page=${page}&per_page=${perPage}`;
  sendJson(res, 200, {
    page,
    per_page: perPage,
    total_pages: Math.ceil(listed.length / perPage),
    total_count: listed.length,
    environments: listed.slice(start, start + perPage),
    _links: { self: { href } },
  });
}
