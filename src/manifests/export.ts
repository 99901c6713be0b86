import { Document } from 'yaml';
import type { ObservedEnvironment } from '../core/model.ts';
import { compareNames, normalizePolicies } from '../core/plan.ts';
import { ENVIRONMENT_TYPES, NAME_PATTERN } from './names.ts';

/**
 * Writes one org's listing as a manifest in exactly the format `validate` accepts (the `yaml`
 * package quotes whatever needs quoting). Fields the listing does not carry are left out, with
 * a comment saying so; environments envsync cannot manage are listed in a comment.
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
  const environments = managed.map((env) => ({
    name: env.name,
    type: env.type,
    description: env.description,
    ...(env.includeScaling === true ? { include_scaling: true } : {}),
    ...(env.policies !== undefined && env.policies.length > 0
      ? { policies: normalizePolicies(env.policies) }
      : {}),
  }));
  const doc = new Document({ org, environments });
  const header = [`Exported by envsync from ${source} (org ${org}).`];
  if (managed.some((env) => env.includeScaling === undefined || env.policies === undefined)) {
    header.push(
      'The listing does not carry include_scaling and policies, so they are left out here',
      '(a manifest without them means false and []). Set them before the first sync if they differ.',
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
