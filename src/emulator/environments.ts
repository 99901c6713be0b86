/**
 * The environments: the contract's upsert and listing, and the kosli profile's routes for one
 * environment (read, PATCH, archive, rename). The rules and their reasons are in
 * docs/api-behaviour.md; the checks before a request's own work are in access.ts.
 */
import { z } from 'zod';
import { shownSegment, type ApiDeps, type Call } from './access.ts';
import { decodeSegment, sendError, sendJson } from './http.ts';
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
  type Validated,
} from './validation.ts';

/** The types the contract allows, and the nine production knows (case-sensitive). */
const SPEC_TYPES = ['K8S', 'S3', 'logical'];
const KOSLI_TYPES = [...SPEC_TYPES, 'ECS', 'lambda', 'server', 'docker', 'azure-apps', 'cloud-run'];

const text = z.string({ error: expected('a string') });
const flag = z.boolean({ error: expected('a boolean') });
const typeIn = (types: readonly string[]) =>
  text.refine((type) => types.includes(type), {
    error: ({ input }) => `'${String(input)}' is not one of ${types.join(', ')}`,
  });

/** Production reads `null` for an optional field as "not given". */
const orNull = <T>(schema: z.ZodType<T>) =>
  schema.nullish().transform((value) => value ?? undefined);

/** The members of a logical environment: names by the rule, each once. */
const members = stringList('a list of environment names').superRefine((list, ctx) => {
  const problem = list.find((name, i) => !NAME_PATTERN.test(name) || list.indexOf(name) !== i);
  if (problem === undefined) return;
  ctx.addIssue({
    code: 'custom',
    message: NAME_PATTERN.test(problem)
      ? `'${problem}' is listed more than once`
      : `'${problem}' ${NAME_RULE}`,
  });
});

/** Members only on a logical environment, even an empty list. */
const onlyLogical = (type: string): string =>
  `only a logical environment includes others; this one is of type '${type}'`;

/** The contract's five fields, no null (docs/api-behaviour.md#request-body-schema). */
const SPEC_PUT = jsonObject({
  name: nameSchema,
  description: text,
  type: typeIn(SPEC_TYPES),
  include_scaling: flag.optional(),
  policies: stringList('an array of strings').optional(),
});

/** The published schema's seven fields, each optional one also null. */
const KOSLI_PUT = jsonObject({
  name: nameSchema,
  description: text,
  type: typeIn(KOSLI_TYPES),
  include_scaling: orNull(flag),
  require_provenance: orNull(flag),
  policies: orNull(stringList('an array of strings or null')),
  included_environments: orNull(members),
}).superRefine((body, ctx) => {
  if (body.included_environments === undefined || body.type === 'logical') return;
  ctx.addIssue({
    code: 'custom',
    path: ['included_environments'],
    message: onlyLogical(body.type),
  });
});

/** The kosli PATCH: the fields it takes, each optional; `name`, `type` and the rest are unknown. */
const PATCH = jsonObject({
  description: text,
  include_scaling: flag,
  included_environments: members,
}).partial();

/** The listing entry of the kosli profile: no `require_provenance`; `include_scaling` is retired. */
function listingEntry(env: StoredEnvironment): Record<string, unknown> {
  const { archived: _archived, require_provenance: _provenance, ...entry } = env;
  const attached = env.policies?.length ? env.policies : null;
  return { ...entry, include_scaling: false, policies: attached };
}

/** The read of one environment (and the PATCH's answer): the entry plus `require_provenance`. */
function detail(env: StoredEnvironment): Record<string, unknown> {
  return { ...listingEntry(env), require_provenance: env.require_provenance };
}

/**
 * The decoded `{name}` of a live environment of `org`, or undefined once the answer has been sent:
 * 400 for a name that breaks the rule, else production's 404 ("does not exist" or "has been
 * archived"). A token in the name is shown as [REDACTED].
 */
export function liveName(call: Call): string | undefined {
  const { res, org, name: rawName, deps } = call;
  const name = decodeSegment(rawName);
  const shown = shownSegment(name ?? rawName, call);
  if (name === undefined || !NAME_PATTERN.test(name)) {
    sendError(res, 400, `Environment name '${shown}' ${NAME_RULE}`);
  } else if (deps.store.get(org, name) !== undefined) return name;
  else if (deps.store.isArchived(org, name)) {
    sendError(res, 404, `Environment named '${shown}' in organization '${org}' has been archived`);
  } else
    sendError(res, 404, `Environment named '${shown}' does not exist for organization '${org}'`);
  return undefined;
}

/**
 * PUT /api/v2/environments/{org}: creates or updates. A create (no live environment of the name)
 * may meet a drawn conflict (`conflict()`), and holds its name for `createHoldMs`, during which
 * another create of the name is a 409.
 */
export async function putEnvironment({ req, res, org, deps, conflict }: Call): Promise<void> {
  const schema: z.ZodType<EnvironmentInput> = deps.profile === 'kosli' ? KOSLI_PUT : SPEC_PUT;
  const input = await readChecked(req, res, schema);
  if (input === undefined) return;
  if (deps.store.get(org, input.name) === undefined) {
    if (conflict() || !deps.store.hold(org, input.name)) {
      // Production's retryable answer to concurrent creates of one name.
      const message = `Environment named '${input.name}' is being created by another request in organization '${org}'; try again`;
      return sendError(res, 409, message);
    }
    try {
      const ms = deps.faults().createHoldMs;
      if (ms > 0) await deps.hold(ms);
    } finally {
      deps.store.release(org, input.name);
    }
  }
  // Checked against the store and applied in one synchronous step, so no other request can
  // archive a member in between (docs/api-behaviour.md#logical-environments).
  const list = input.included_environments;
  const problem = list === undefined ? undefined : deps.store.membersProblem(org, input.name, list);
  if (problem !== undefined) {
    sendInvalid(res, { included_environments: problem });
    return;
  }
  deps.store.upsert(org, input, deps.profile);
  // Production's answer for create and update alike (docs/api-behaviour.md#successful-writes).
  sendJson(res, 201, 'OK');
}

/**
 * PATCH /api/v2/environments/{org}/{name} (kosli): changes the fields given, leaves the others.
 * `""` clears the description; `include_scaling` is retired (accepted, never stored). Every
 * problem with the body is a 422. Answers 200 with the environment.
 */
export async function patchEnvironment(call: Call): Promise<void> {
  const { req, res, org, deps } = call;
  const change = await readChecked(req, res, PATCH, { status: 422 });
  if (change === undefined) return;
  const name = liveName(call);
  if (name === undefined) return;
  const { include_scaling: _retired, ...fields } = change;
  const type = deps.store.get(org, name)?.type ?? '';
  if (fields.included_environments !== undefined) {
    const problem =
      type === 'logical'
        ? deps.store.membersProblem(org, name, fields.included_environments)
        : onlyLogical(type);
    if (problem !== undefined) {
      sendInvalid(res, { included_environments: problem }, 422);
      return;
    }
  }
  const updated = deps.store.update(org, name, fields);
  if (updated !== undefined) sendJson(res, 200, detail(updated));
}

/** GET /api/v2/environments/{org}/{name} (kosli). */
export function readEnvironment(call: Call): void {
  const { res, org, deps } = call;
  const name = liveName(call);
  const env = name === undefined ? undefined : deps.store.get(org, name);
  if (env !== undefined) sendJson(res, 200, detail(env));
}

/** PUT /api/v2/environments/{org}/{name}/archive (kosli): the body is `{}` or empty. */
export async function archiveEnvironment(call: Call): Promise<void> {
  const { req, res, org, deps } = call;
  if ((await readChecked(req, res, jsonObject({}), { emptyIsObject: true })) === undefined) return;
  const name = liveName(call);
  if (name === undefined) return;
  deps.store.archive(org, name);
  sendJson(res, 200, 'OK');
}

/**
 * PUT /api/v2/environments/{org}/{name}/rename (kosli), `{"new_name": "..."}`. A name a live
 * environment holds is a 400, not a 409: clients retry a 409, and this conflict does not pass.
 */
export async function renameEnvironment(call: Call): Promise<void> {
  const { req, res, org, deps } = call;
  const body = await readChecked(req, res, jsonObject({ new_name: nameSchema }));
  if (body === undefined) return;
  const name = liveName(call);
  if (name === undefined) return;
  // Checked and applied in one synchronous step, so no other request can take the name between.
  if (deps.store.rename(org, name, body.new_name) === 'taken') {
    const taken = `an environment named '${body.new_name}' already exists in organization '${org}'`;
    sendInvalid(res, { new_name: taken });
    return;
  }
  sendJson(res, 200, 'OK');
}

/** The kosli listing's `page` (from 1) and `per_page` (1..50, default 20); none: the bare array. */
function pagination(
  query: URLSearchParams,
): Validated<{ page: number; perPage: number } | undefined> {
  const [rawPage, rawPerPage] = [query.get('page'), query.get('per_page')];
  if (rawPage === null && rawPerPage === null) return { ok: true, value: undefined };
  const whole = (value: string | null, fallback: number, max: number): number | undefined => {
    const number = value === null ? fallback : /^\d{1,9}$/.test(value) ? Number(value) : 0;
    return number >= 1 && number <= max ? number : undefined;
  };
  const page = whole(rawPage, 1, Number.MAX_SAFE_INTEGER);
  const perPage = whole(rawPerPage, 20, 50);
  if (page !== undefined && perPage !== undefined) return { ok: true, value: { page, perPage } };
  const errors: Record<string, string> = {};
  if (page === undefined) errors['page'] = 'must be a whole number from 1';
  if (perPage === undefined) errors['per_page'] = 'must be a whole number from 1 to 50';
  return { ok: false, errors };
}

/**
 * The org's entries with the listing faults: without `org` (`listingOmitOrg`), placeholders in
 * place of the named environments, and the extra entries as given, in name order.
 */
function withListingFaults(
  entries: Record<string, unknown>[],
  org: string,
  deps: ApiDeps,
): Record<string, unknown>[] {
  const { listingExtra, listingOmitOrg, placeholders } = deps.faults();
  const hidden = [
    ...(placeholders['*'] ?? []),
    ...(Object.hasOwn(placeholders, org) ? (placeholders[org] ?? []) : []),
  ];
  const shown = entries.map(({ org: _org, ...entry }) => {
    if (hidden.includes(String(entry['name']))) {
      return { org, name: entry['name'], placeholder: true, error: 'record could not be rendered' };
    }
    return listingOmitOrg ? entry : { org, ...entry };
  });
  const extra = Object.hasOwn(listingExtra, org) ? (listingExtra[org] ?? []) : [];
  return extra.length === 0 ? shown : [...shown, ...extra].sort(byName);
}

/** GET /api/v2/environments/{org}: the contract's envelope, or production's array or pages. */
export function listEnvironments({ res, org, query, deps }: Call): void {
  const environments = deps.store.list(org);
  if (deps.profile === 'spec') {
    const env = environments.map(({ name, type, description }) => ({ name, type, description }));
    sendJson(res, 200, { env: withListingFaults(env, org, deps) });
    return;
  }
  const paging = pagination(query);
  if (!paging.ok) {
    sendError(res, 400, 'Invalid query parameters', { errors: paging.errors });
    return;
  }
  const listed = withListingFaults(environments.map(listingEntry), org, deps);
  if (paging.value === undefined) {
    sendJson(res, 200, listed);
    return;
  }
  const { page, perPage } = paging.value;
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
