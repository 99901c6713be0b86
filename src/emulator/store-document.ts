/** The store document (the admin store, `--data`): loose for seeds, strict against typos. */
import { z } from 'zod';
import { stringList, stringMap, validate, type Validated } from './validation.ts';

/** The author the emulator writes on every version it makes (it has no users). */
export const CREATED_BY = 'envsync-emulator';

/** The name rule plus `~`, which the service's April 2026 schema allowed. */
const SEED_NAME = /^[A-Za-z0-9][A-Za-z0-9._~-]*$/;
const seedName = z.string().regex(SEED_NAME, `must be a string matching ${SEED_NAME.source}`);
const text = z.string({ error: 'must be a string' });
const time = z.number({ error: 'must be a number (epoch seconds)' });
const timeOrNull = z.number({ error: 'must be a number or null' }).nullable();
const names = stringList('an array of strings or null').nullable();
const flag = z.boolean({ error: 'must be a boolean' });

function environment(nowSeconds: number) {
  return z
    .strictObject({
      org: z.string().optional(),
      name: seedName,
      type: z.string({ error: 'must be a non-empty string' }).min(1, 'must be a non-empty string'),
      description: text,
      include_scaling: flag.default(false),
      require_provenance: flag.default(false),
      policies: names.default([]),
      tags: stringMap('must be an object of strings').default({}),
      last_modified_at: time.default(nowSeconds),
      last_reported_at: timeOrNull.default(null),
      last_changed_at: timeOrNull.optional(),
      state: z.boolean({ error: 'must be a boolean or null' }).nullable().default(null),
      included_environments: names.optional(),
      archived: flag.default(false),
    })
    .transform((env) => {
      const { last_changed_at: changed, included_environments: members } = env;
      const none = env.type === 'logical' ? [] : null;
      return {
        ...env,
        last_changed_at: changed === undefined ? env.last_modified_at : changed,
        included_environments: members === undefined ? none : members,
      };
    });
}

function policyDocument(nowSeconds: number) {
  const version = z.strictObject({
    version: z.number().int().min(1, 'must be a whole number from 1').optional(),
    policy_yaml: text,
    timestamp: time.optional(),
    created_by: text.default(CREATED_BY),
  });
  return z
    .strictObject({
      name: seedName,
      description: text.default(''),
      created_at: time.default(nowSeconds),
      versions: z.array(version).min(1, { error: 'must be a non-empty array of versions' }),
    })
    .transform((document, ctx) => {
      const versions = document.versions.map((item, index) => ({
        version: item.version ?? index + 1,
        policy_yaml: item.policy_yaml,
        timestamp: item.timestamp ?? document.created_at,
        created_by: item.created_by,
      }));
      versions.forEach((item, index) => {
        const before = versions[index - 1]?.version ?? 0;
        if (item.version <= before) {
          ctx.issues.push({
            code: 'custom',
            input: item.version,
            path: ['versions', index, 'version'],
            message: `must be greater than the one before (${before})`,
          });
        }
      });
      return { ...document, versions };
    });
}

/** An environment as kept: the kosli listing's fields, `require_provenance` and `archived`. */
export type StoredEnvironment = z.output<ReturnType<typeof environment>> & { org: string };
export type PolicyDocument = z.output<ReturnType<typeof policyDocument>>;

/** A new environment: the fields given, the defaults of a store document for the others. */
export function newEnvironment(
  fields: z.input<ReturnType<typeof environment>> & { org: string },
  nowSeconds: number,
): StoredEnvironment {
  return { ...environment(nowSeconds).parse(fields), org: fields.org };
}

export interface StoreDocument {
  version: 1;
  orgs: Record<string, StoredEnvironment[]>;
  policies?: Record<string, PolicyDocument[]>;
}

/** Per org, a list of `item`: one live (not archived) entry per name, its `org` the key's. */
function perOrg<T extends { name: string; org?: string | undefined; archived?: boolean }>(
  item: z.ZodType<T>,
  what: string,
) {
  const orgName = z.string().regex(SEED_NAME, { error: `org name must match ${SEED_NAME.source}` });
  const list = z.array(item, { error: `must be an array of ${what}` });
  const error = `must be an object of org name -> array of ${what}`;
  return z.record(orgName, list, { error }).superRefine((orgs, ctx) => {
    for (const [org, entries] of Object.entries(orgs)) {
      const live = new Set<string>();
      entries.forEach(({ name, org: listed, archived = false }, index) => {
        if (listed !== undefined && listed !== org) {
          const message = `must be "${org}" (the key it is listed under) or absent`;
          ctx.addIssue({ code: 'custom', path: [org, index, 'org'], message });
        }
        if (archived) return;
        const message = `'${name}' is listed twice`;
        if (live.has(name)) ctx.addIssue({ code: 'custom', path: [org, index, 'name'], message });
        live.add(name);
      });
    }
  });
}

export function parseStoreDocument(raw: unknown, nowSeconds: number): Validated<StoreDocument> {
  const schema = z
    .strictObject(
      {
        version: z.literal(1, { error: 'must be 1' }).default(1),
        orgs: perOrg(environment(nowSeconds), 'environments'),
        policies: perOrg(policyDocument(nowSeconds), 'policy documents').default({}),
      },
      { error: 'must be a JSON object' },
    )
    .transform(({ orgs, policies }) => {
      const listed = Object.entries(orgs).map(([org, list]) => [
        org,
        list.map((env) => ({ org, ...env })),
      ]);
      return { version: 1 as const, orgs: Object.fromEntries(listed), policies };
    });
  return validate(schema, raw);
}
