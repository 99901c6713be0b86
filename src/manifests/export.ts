import { Document } from 'yaml';
import type { ApiDialect } from '../core/dialect.ts';
import {
  ENVIRONMENT_TYPES,
  FIELD_LIST,
  normalizeValue,
  RECORDED_FIELDS,
  sendRoute,
} from '../core/fields.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import { escapeJson } from '../core/escape.ts';
import { compareNames, NAME_PATTERN } from '../core/names.ts';
import { withoutOwnerTag } from '../core/ownership.ts';
import type { ObservedPolicyDocument } from '../core/policy-documents.ts';

/** One org's manifest, the fields not seen, its policy files, and what it leaves out, with why. */
export interface ExportedManifest {
  readonly text: string;
  readonly unseen: readonly string[];
  readonly policyFiles: readonly { readonly path: string; readonly text: string }[];
  readonly policiesLeftOut: readonly string[];
  readonly secretsLeftOut: readonly string[];
}

/** Policy documents to export, and each one's file (none to stdout: named in a comment only). */
export interface PolicyExport {
  readonly documents: readonly ObservedPolicyDocument[];
  readonly fileOf?: ((name: string) => string) | undefined;
}

/** The `policies:` entries and files of an export, and what it leaves out. */
function exportPolicies(policies: PolicyExport | undefined, holds: (text: string) => boolean) {
  const entries: { name: string; description: string; file: string }[] = [];
  const files: { path: string; text: string }[] = [];
  const leftOut: string[] = [];
  const sorted = [...(policies?.documents ?? [])].sort((a, b) => compareNames(a.name, b.name));
  for (const doc of sorted) {
    const shown = escapeJson(JSON.stringify(doc.name));
    if (!NAME_PATTERN.test(doc.name)) leftOut.push(`${shown} (a name envsync cannot manage)`);
    else if (doc.latest === undefined || doc.latest.content.trim() === '')
      leftOut.push(`${shown} (it has no version with any YAML)`);
    else if (holds(JSON.stringify(doc)))
      leftOut.push(`${shown} (it holds a secret envsync holds: a token)`);
    else if (policies?.fileOf === undefined) leftOut.push(`${shown} (written only with --out DIR)`);
    else {
      const file = policies.fileOf(doc.name);
      entries.push({ name: doc.name, description: doc.description, file });
      files.push({ path: file, text: doc.latest.content });
    }
  }
  return { entries, files, leftOut };
}

/**
 * Writes one org's listing as a manifest: a field exactly when the listing shows it and the
 * dialect can send it; a value that `holds` a secret never, not even masked (docs/security.md).
 */
export function renderExportedManifest(
  org: string,
  observed: readonly ObservedEnvironment[],
  source: string,
  dialect: ApiDialect,
  policies?: PolicyExport,
  holds: (text: string) => boolean = () => false,
): ExportedManifest {
  const fields = FIELD_LIST.filter((spec) => sendRoute(spec, dialect) !== undefined);
  const allowed = new Set<string>(ENVIRONMENT_TYPES);
  const sorted = [...observed].sort((a, b) => compareNames(a.name, b.name));
  const secretsLeftOut: string[] = [];
  const managed = sorted.filter((env) => allowed.has(env.type) && NAME_PATTERN.test(env.name));
  const skipped = sorted.filter((env) => !managed.includes(env));
  const unseen = new Set<string>();
  const environments = managed.flatMap((env) => {
    if (holds(env.name)) {
      secretsLeftOut.push(`environment ${JSON.stringify(env.name)}, whole (its name holds it)`);
      return [];
    }
    const out: Record<string, unknown> = { name: env.name };
    const listed = withoutOwnerTag(org, env);
    for (const spec of fields) {
      const value = listed[spec.name];
      // A field the manifest may not hold on this type (a listing may show it anyway).
      if (spec.onlyForTypes !== undefined && !spec.onlyForTypes.includes(env.type)) continue;
      if (value === undefined) unseen.add(spec.manifestKey);
      else if (holds(JSON.stringify(value)))
        secretsLeftOut.push(`environment ${env.name}: ${spec.manifestKey}`);
      else out[spec.manifestKey] = normalizeValue(spec, value);
    }
    return [out];
  });
  const exported = exportPolicies(policies, holds);
  const doc = new Document({
    org,
    ...(exported.entries.length === 0 ? {} : { policies: exported.entries }),
    environments,
  });
  const header = [`Exported by envsync from ${source} (org ${org}).`];
  const missing = RECORDED_FIELDS.map((spec) => spec.manifestKey).filter((key) => unseen.has(key));
  if (missing.length > 0) {
    header.push(
      `The listing does not show ${missing.join(', ')}, so ${missing.length === 1 ? 'it is' : 'they are'} left out where unseen:`,
      'a manifest that leaves a field out leaves it as the service holds it. Declare one to manage it.',
    );
  }
  const listed = (title: string, lines: readonly string[]) => {
    if (lines.length > 0) header.push(title, ...lines.map((line) => `  ${line}`));
  };
  listed(
    'Policy documents not exported (they stay on the service as they are; envsync never deletes one):',
    exported.leftOut,
  );
  listed(
    'Left out, as they hold a secret envsync holds (a token): write them by hand:',
    secretsLeftOut,
  );
  doc.commentBefore = header.map((line) => ` ${line}`).join('\n');
  if (skipped.length > 0) {
    doc.comment = [
      ` Not exported: envsync manages only the types ${ENVIRONMENT_TYPES.join(', ')}; these stay unmanaged:`,
      ...skipped.map((env) => `   ${JSON.stringify(env.name)} (type ${JSON.stringify(env.type)})`),
    ].join('\n');
  }
  return {
    text: doc.toString({ lineWidth: 0 }),
    unseen: missing,
    policyFiles: exported.files,
    policiesLeftOut: exported.leftOut,
    secretsLeftOut,
  };
}
