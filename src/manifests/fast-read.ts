/**
 * The fast reader: js-yaml, about ten times faster than `yaml`, for the texts both read alike. Its
 * values go to the same zod schema; any other text, and every problem, is `yaml`'s to read.
 */
import { CORE_SCHEMA, defineScalarTag, loadAll, NOT_RESOLVED } from 'js-yaml';

/** Booleans `true` and `false` only, as `yaml` reads them (runtime/yaml-options.ts). */
const SCHEMA = CORE_SCHEMA.withTags(
  defineScalarTag('tag:yaml.org,2002:bool', {
    implicit: true,
    resolve: (text) => (text === 'true' ? true : text === 'false' ? false : NOT_RESOLVED),
    identify: (value) => typeof value === 'boolean',
  }),
);

/**
 * What the two readers may read differently, or only `yaml` reports where it stands: tags,
 * anchors, aliases, merge keys, block scalars, escapes, directives, document markers, tabs, NEL,
 * line and paragraph separators, byte order marks, a closing bracket followed by text.
 */
const LEFT_TO_YAML = /[\t\\!&*|>%\u0085\u2028\u2029\ufeff]|<<|^[ ]*(?:---|\.\.\.)|[\]}][^\s,\]}]/m;

/** A key `yaml` reads as null, a boolean or a number (js-yaml makes it a string), or `__proto__`. */
const NOT_A_STRING =
  /^(?:~|null|Null|NULL|true|false|[-+]?(?:[0-9]+|\.[0-9]+|[0-9]+\.[0-9]*)(?:[eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|__proto__)?$/;

/** The documents' values (line breaks already LF), or undefined: the text is `yaml`'s to read. */
export function readFast(text: string): unknown[] | undefined {
  if (LEFT_TO_YAML.test(text)) return undefined;
  try {
    const values = loadAll(text, { schema: SCHEMA });
    return values.some(hasLooseKey) ? undefined : values;
  } catch {
    return undefined;
  }
}

function hasLooseKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasLooseKey);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, item]) => NOT_A_STRING.test(key) || hasLooseKey(item));
}
