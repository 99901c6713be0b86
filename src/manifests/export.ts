import { Document } from 'yaml';
import type { ApiDialect } from '../core/dialect.ts';
import { ENVIRONMENT_TYPES, FIELD_LIST, RECORDED_FIELDS, sendRoute } from '../core/fields.ts';
import { normalizeValue } from '../core/value-kinds.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import { compareNames, NAME_PATTERN } from '../core/names.ts';

/** One org's exported manifest, and the fields the listing did not show for some environment. */
export interface ExportedManifest {
  readonly text: string;
  readonly unseen: readonly string[];
}

/**
 * Writes one org's listing as a manifest in exactly the format `validate` accepts (the `yaml`
 * package quotes whatever needs quoting). A field is written exactly when the listing shows it:
 * one it does not show is left out (a comment says so), and a manifest that leaves a field out
 * leaves it as the service holds it, so the round trip changes nothing. A field the dialect cannot
 * send (tags in `contract`) is never written: a manifest declaring it would fail its org.
 * Environments envsync cannot manage are listed in a comment.
 */
export function renderExportedManifest(
  org: string,
  observed: readonly ObservedEnvironment[],
  source: string,
  dialect: ApiDialect,
): ExportedManifest {
  const fields = FIELD_LIST.filter((spec) => sendRoute(spec, dialect) !== undefined);
  const allowed = new Set<string>(ENVIRONMENT_TYPES);
  const sorted = [...observed].sort((a, b) => compareNames(a.name, b.name));
  const managed = sorted.filter((env) => allowed.has(env.type) && NAME_PATTERN.test(env.name));
  const skipped = sorted.filter((env) => !managed.includes(env));
  const unseen = new Set<string>();
  const environments = managed.map((env) => {
    const out: Record<string, unknown> = { name: env.name };
    for (const spec of fields) {
      const value = env[spec.name];
      // A field the manifest may not hold on this type (a listing may show it anyway).
      if (spec.onlyForTypes !== undefined && !spec.onlyForTypes.includes(env.type)) continue;
      if (value === undefined) unseen.add(spec.manifestKey);
      else out[spec.manifestKey] = normalizeValue(spec, value);
    }
    return out;
  });
  const doc = new Document({ org, environments });
  const header = [`Exported by envsync from ${source} (org ${org}).`];
  const missing = RECORDED_FIELDS.map((spec) => spec.manifestKey).filter((key) => unseen.has(key));
  if (missing.length > 0) {
    header.push(
      `The listing does not show ${missing.join(', ')}, so ${missing.length === 1 ? 'it is' : 'they are'} left out where unseen:`,
      'a manifest that leaves a field out leaves it as the service holds it. Declare one to manage it.',
    );
  }
  doc.commentBefore = header.map((line) => ` ${line}`).join('\n');
  if (skipped.length > 0) {
    doc.comment = [
      ` Not exported: envsync manages only the types ${ENVIRONMENT_TYPES.join(', ')}; these stay unmanaged:`,
      ...skipped.map((env) => `   ${JSON.stringify(env.name)} (type ${JSON.stringify(env.type)})`),
    ].join('\n');
  }
  return { text: doc.toString({ lineWidth: 0 }), unseen: missing };
}
