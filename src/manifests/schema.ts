import * as z from 'zod';
import {
  FIELD_LIST,
  FIELDS,
  type FieldSpec,
  isPlainObject,
  MAP_KEY_MAX,
  MAP_VALUE_MAX,
  repeatedIndexes,
  type ValueKind,
} from '../core/fields.ts';
import { describeValue } from './messages.ts';
import { NAME_PATTERN } from '../core/names.ts';

const name = z
  .string()
  .regex(NAME_PATTERN)
  .describe('Starts with a letter or number; then letters, numbers, ".", "-" or "_".');

/** Each item of a list given once (the JSON Schema says so with `uniqueItems`). */
function distinct(spec: FieldSpec, schema: z.ZodType): z.ZodType {
  return schema
    .superRefine((value, ctx) => {
      const list = (value ?? []) as readonly string[];
      for (const index of repeatedIndexes(list)) {
        ctx.addIssue({
          code: 'custom',
          path: [index],
          message: `${spec.item ?? 'value'} "${list[index]}" is listed twice`,
        });
      }
    })
    .meta({ uniqueItems: true });
}

/**
 * Strings by string (tags), checked in place: z.record would drop a key such as `__proto__`. A key
 * that breaks envsync's limits is marked `at: 'key'`: parse.ts shows it where the key is written.
 */
function stringMap(spec: FieldSpec): z.ZodType {
  const item = spec.item ?? 'map';
  return z
    .unknown()
    .superRefine((value, ctx) => {
      if (!isPlainObject(value)) {
        ctx.addIssue({
          code: 'custom',
          message: `expected a mapping of ${item} keys to strings, got ${describeValue(value)}`,
        });
        return;
      }
      for (const key of Object.keys(value)) {
        const problem =
          key.length === 0
            ? `a ${item} key may not be empty`
            : key.length > MAP_KEY_MAX
              ? `a ${item} key is at most ${MAP_KEY_MAX} characters long (envsync's limit), this one ${key.length}`
              : undefined;
        if (problem !== undefined) {
          ctx.addIssue({ code: 'custom', path: [key], message: problem, params: { at: 'key' } });
        }
        const text = value[key];
        const quote = ['number', 'boolean'].includes(typeof text)
          ? ' (quote it to make it a string)'
          : '';
        const wrong =
          typeof text !== 'string'
            ? `expected a string, got ${describeValue(text)}${quote}`
            : text.length > MAP_VALUE_MAX
              ? `a ${item} value is at most ${MAP_VALUE_MAX} characters long (envsync's limit), this one ${text.length}`
              : undefined;
        if (wrong !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: wrong });
      }
    })
    .meta({
      type: 'object',
      propertyNames: { minLength: 1, maxLength: MAP_KEY_MAX },
      additionalProperties: { type: 'string', maxLength: MAP_VALUE_MAX },
    });
}

const BASE: Readonly<Record<ValueKind, (spec: FieldSpec) => z.ZodType>> = {
  enum: (spec) => z.enum(spec.values as [string, ...string[]]),
  text: () => z.string(),
  flag: () => z.boolean(),
  set: (spec) => z.array(spec.items === 'environments' ? name : z.string()),
  map: (spec) => stringMap(spec),
};

/** The schema of one field's value in a manifest. */
function fieldSchema(spec: FieldSpec): z.ZodType {
  let schema = BASE[spec.kind](spec);
  if (spec.managed === 'when-declared') schema = schema.optional();
  if (spec.kind === 'set') schema = distinct(spec, schema);
  return schema.describe(spec.doc);
}

/** The fields allowed only on some types. */
const TYPE_BOUND = FIELD_LIST.filter((spec) => spec.onlyForTypes !== undefined);

export const environmentSchema = z
  .strictObject({
    name: name.describe('Name of the environment, unique within the organization.'),
    // Not a field: it says which environment of the listing this one is, and is never sent.
    renamed_from: name
      .optional()
      .describe(
        "The environment's previous name, other than `name`: while the service lists that name and not this one, the plan renames the environment, keeping its history (the production service only).",
      ),
    ...Object.fromEntries(FIELD_LIST.map((spec) => [spec.manifestKey, fieldSchema(spec)])),
  })
  .superRefine((env, ctx) => {
    const raw = env as Record<string, unknown>;
    // JSON Schema cannot compare two values: this rule is the validator's alone.
    if (raw['renamed_from'] !== undefined && raw['renamed_from'] === raw['name']) {
      const message =
        "is the environment's own name: remove renamed_from, or set it to the name the environment had before the rename";
      ctx.addIssue({ code: 'custom', path: ['renamed_from'], message });
    }
    const type = raw[FIELDS.type.manifestKey];
    for (const spec of TYPE_BOUND) {
      const types = spec.onlyForTypes ?? [];
      if (raw[spec.manifestKey] === undefined || types.includes(type as string)) continue;
      ctx.addIssue({
        code: 'custom',
        path: [spec.manifestKey],
        message: `is allowed only on type ${types.join(' or ')} (this environment's type is ${JSON.stringify(type)})`,
      });
    }
  })
  // JSON Schema says what the superRefine above checks: on another type, the key is absent.
  .meta({
    allOf: TYPE_BOUND.map((spec) => ({
      if: {
        properties: { [FIELDS.type.manifestKey]: { not: { enum: spec.onlyForTypes } } },
        required: [FIELDS.type.manifestKey],
      },
      // oxlint-disable-next-line unicorn/no-thenable -- JSON Schema's keyword, not a promise
      then: { properties: { [spec.manifestKey]: false } },
    })),
  })
  .describe('One environment of the organization.');

/** One policy document of the org: its name, its description and the file holding its YAML. */
export const policyDocumentSchema = z
  .strictObject({
    name: name.describe('Name of the policy document, unique within the organization.'),
    description: z
      .string()
      .optional()
      .describe(
        'What the policy requires, in words. Managed only when declared: left out, the service keeps its own.',
      ),
    file: z
      .string()
      .min(1)
      .describe(
        "The file holding the policy's YAML, relative to this manifest; it must lie inside the manifests root and is never read as a manifest.",
      ),
  })
  .describe('One policy document of the organization (the production service only).');

export const manifestSchema = z
  .strictObject({
    org: name.describe('The organization these environments belong to.'),
    prune: z
      .boolean()
      .optional()
      .describe(
        'true: archive the environments of the organization that envsync owns and its manifests no longer declare (the production service only). Every document of the organization that declares it must agree.',
      ),
    suspend: z
      .boolean()
      .optional()
      .describe(
        'true: read and plan the organization and show its drift, but send nothing to it (an incident, a freeze). Every document of the organization that declares it must agree.',
      ),
    policies: z
      .array(policyDocumentSchema)
      .superRefine((list, ctx) => {
        const names = list.map((doc) => doc.name);
        for (const index of repeatedIndexes(names)) {
          ctx.addIssue({
            code: 'custom',
            path: [index, 'name'],
            message: `policy document "${names[index]}" is listed twice`,
          });
        }
      })
      .optional()
      .describe(
        "The organization's policy documents, uploaded before the environments that attach them (the production service only; never deleted).",
      ),
    environments: z.array(environmentSchema).describe('The environments of the organization.'),
  })
  .describe('An envsync manifest: the environments of one organization.');

/** A manifest as the schema outputs it: every field by its manifest key. */
export interface Manifest {
  readonly org: string;
  readonly prune?: boolean | undefined;
  readonly suspend?: boolean | undefined;
  readonly policies?: readonly z.infer<typeof policyDocumentSchema>[] | undefined;
  readonly environments: readonly ({
    readonly name: string;
    readonly renamed_from?: string | undefined;
  } & Record<string, unknown>)[];
}

/** The JSON Schema (draft 2020-12) of one manifest document, from the validator's own schema. */
export function manifestJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(manifestSchema, {
    target: 'draft-2020-12',
    io: 'input',
  });
  return { $schema, title: 'envsync manifest', ...rest };
}
