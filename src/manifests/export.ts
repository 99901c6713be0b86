import { Document } from 'yaml';
import { ENVIRONMENT_TYPES, FIELD_LIST, RECORDED_FIELDS } from '../core/fields.ts';
import { normalizeValue, sameValue, showValue } from '../core/value-kinds.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import { compareNames, NAME_PATTERN } from '../core/names.ts';

/**
 * Writes one org's listing as a manifest in exactly the format `validate` accepts (the `yaml`
 * package quotes whatever needs quoting). A field is written when the listing carries it and it
 * differs from the field's default; fields the listing does not carry are left out, with a comment
 * saying so; environments envsync cannot manage are listed in a comment.
 */
export function renderExportedManifest(
  org: string,
  observed: readonly ObservedEnvironment[],
  source: string,
): string {
  const allowed = new Set<string>(ENVIRONMENT_TYPES);
  const sorted = [...observed].sort((a, b) => compareNames(a.name, b.name));
  const managed = sorted.filter((env) => allowed.has(env.type) && NAME_PATTERN.test(env.name));
  const skipped = sorted.filter((env) => !managed.includes(env));
  const environments = managed.map((env) => {
    const out: Record<string, unknown> = { name: env.name };
    for (const spec of FIELD_LIST) {
      const value = env[spec.name];
      if (value === undefined) continue;
      if (spec.default !== undefined && sameValue(spec, value, spec.default)) continue;
      // A field the manifest may not hold on this type (a listing may show it anyway).
      if (spec.onlyForTypes !== undefined && !spec.onlyForTypes.includes(env.type)) continue;
      out[spec.manifestKey] = normalizeValue(spec, value);
    }
    return out;
  });
  const doc = new Document({ org, environments });
  const header = [`Exported by envsync from ${source} (org ${org}).`];
  // Fields managed only when declared mean "leave it as it is" when left out: nothing to say.
  const missing = RECORDED_FIELDS.filter(
    (spec) => spec.managed === 'always' && managed.some((env) => env[spec.name] === undefined),
  );
  if (missing.length > 0) {
    const defaults = missing.map((spec) =>
      spec.default === undefined ? 'unset' : showValue(spec.default).replaceAll('"', ''),
    );
    header.push(
      `The listing does not carry ${missing.map((spec) => spec.manifestKey).join(' and ')}, so they are left out here`,
      `(a manifest without them means ${defaults.join(' and ')}). Set them before the first sync if they differ.`,
    );
  }
  doc.commentBefore = header.map((line) => ` ${line}`).join('\n');
  if (skipped.length > 0) {
    doc.comment = [
      ` Not exported: envsync manages only the types ${ENVIRONMENT_TYPES.join(', ')}; these stay unmanaged:`,
      ...skipped.map((env) => `   ${JSON.stringify(env.name)} (type ${JSON.stringify(env.type)})`),
    ].join('\n');
  }
  return doc.toString({ lineWidth: 0 });
}
