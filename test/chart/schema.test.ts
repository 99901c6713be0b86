/**
 * The chart's values.schema.json refuses what it does not know, at every level, so that a misspelt
 * value fails `helm install` with its name. Checked with ajv, without helm (test/system/chart.test.ts
 * holds helm itself to the same files).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Ajv, type ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART_DIR, DEFAULT_VALUES, invalidValues, VALUES_FILES } from '../helpers/chart.ts';

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  definitions?: Record<string, Schema>;
};
type Values = Record<string, unknown>;

const schema = JSON.parse(
  readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8'),
) as Schema;
const validate = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true }).compile(schema);
const read = (file: string) => parse(readFileSync(file, 'utf8')) as Values;
const defaults = read(path.join(CHART_DIR, 'values.yaml'));

const isObject = (value: unknown): value is Values =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `override` over `base`, as helm merges a values file over the chart's: maps merge, the rest replaces. */
function merged(base: Values, override: Values): Values {
  const result = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const under = result[key];
    result[key] = isObject(under) && isObject(value) ? merged(under, value) : value;
  }
  return result;
}

function errorsOf(values: Values): ErrorObject[] {
  return validate(values) ? [] : (validate.errors ?? []);
}

/** Every schema of an object in the schema, with where it is. */
function objectSchemas(node: Schema, where: string): [string, Schema][] {
  const under = (at: (key: string) => string, nodes: Record<string, Schema> = {}) =>
    Object.entries(nodes).map(([key, child]): [string, Schema] => [at(key), child]);
  const children: [string, Schema][] = [
    ...under((key) => `${where}/${key}`, node.properties),
    ...under((key) => `#${key}`, node.definitions),
    ...(node.items === undefined ? [] : [[`${where}[]`, node.items] as [string, Schema]]),
  ];
  const own: [string, Schema][] =
    node.type === 'object' || node.properties !== undefined ? [[where, node]] : [];
  return [...own, ...children.flatMap(([at, child]) => objectSchemas(child, at))];
}

/** The string maps of the values (labels, node selectors): any key, a text value. */
const MAPS = /(^\/nodeSelector|\/labels|\/podLabels|\/matchLabels)$/;

/** Every object of a values document, with its JSON pointer. */
function objectsIn(value: unknown, where: string): [string, Values][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => objectsIn(item, `${where}/${i}`));
  if (!isObject(value)) return [];
  const inner = Object.entries(value).flatMap(([k, v]) => objectsIn(v, `${where}/${k}`));
  return [[where, value], ...inner];
}

/** A key misspelt as people do: its last two letters swapped. */
const misspelt = (key: string) => `${key.slice(0, -2)}${key.at(-1) ?? ''}${key.at(-2) ?? ''}`;

/** The full values file over the defaults: every object of the schema has an instance in it. */
const full = merged(defaults, read(path.join(CHART_DIR, 'ci/full-values.yaml')));

describe("the chart's values schema", () => {
  it('every object of the schema refuses keys it does not name, or is a map of texts', () => {
    const objects = objectSchemas(schema, '');
    expect(objects.length).toBeGreaterThan(20);
    const strict = (node: Schema) =>
      node.additionalProperties === false ||
      (node.properties === undefined &&
        isDeepStrictEqual(node.additionalProperties, { type: 'string', maxLength: 63 }));
    expect(objects.filter(([, node]) => !strict(node)).map(([where]) => where)).toEqual([]);
  });

  it.each(VALUES_FILES)('%s over the defaults is valid', (file) => {
    expect(errorsOf(merged(defaults, read(path.join(CHART_DIR, file))))).toEqual([]);
  });

  it('the defaults alone are refused: the repository, the API and, for the NetworkPolicy, their ranges are required', () => {
    const refused = errorsOf(defaults).map((e) => e.instancePath);
    expect(refused.sort()).toEqual([
      '/api/url',
      '/git/repository',
      '/networkPolicy',
      '/networkPolicy/apiCidrs',
      '/networkPolicy/gitCidrs',
    ]);
  });

  it('a misspelt key is refused, naming it, in every object of the values but the maps', () => {
    const objects = objectsIn(full, '');
    expect(objects.length).toBeGreaterThan(30);
    expect(objects.filter(([where]) => MAPS.test(where)).length).toBeGreaterThanOrEqual(4);
    const wrong: string[] = [];
    for (const [where, object] of objects) {
      const [key = '', value] = Object.entries(object)[0] ?? [];
      const misspelling = misspelt(key);
      const values = structuredClone(full);
      const target = objectsIn(values, '').find(([at]) => at === where)?.[1] ?? {};
      target[misspelling] = value;
      const errors = errorsOf(values);
      const named = errors.some(
        (e) =>
          e.instancePath === where &&
          e.keyword === 'additionalProperties' &&
          isDeepStrictEqual(e.params, { additionalProperty: misspelling }),
      );
      // A map takes any key; every other object refuses the misspelling, by its name.
      if (MAPS.test(where) ? errors.length > 0 : !named) wrong.push(`${where}: ${misspelling}`);
    }
    expect(wrong).toEqual([]);
  });

  it.each(invalidValues().map((v) => [v.name, v] as const))(
    '%s over the default values file is refused where it says',
    (_name, { file, where, word }) => {
      const base = merged(defaults, read(path.join(CHART_DIR, DEFAULT_VALUES)));
      const errors = errorsOf(merged(base, read(file)));
      expect(errors.length).toBeGreaterThan(0);
      const there = errors.filter((e) => e.instancePath === where).map((e) => JSON.stringify(e));
      expect(there, JSON.stringify(errors)).toContainEqual(expect.stringContaining(word));
    },
  );
});
