/**
 * Policy documents in a saved plan (`plan --out`): per org, the digest of the documents the service
 * held, and each upload with the exact text it sends, so `sync --plan` uploads what was reviewed
 * (the file's integrity digest covers the text), and only while the manifests' files still hold
 * it and the service's documents have not moved.
 */
import * as z from 'zod';
import { quoted } from '../api/response.ts';
import { escapeJson } from '../core/escape.ts';
import { compareNames } from '../core/names.ts';
import {
  samePolicyText,
  type ObservedPolicyDocument,
  type PolicyDocumentPlan,
} from '../core/policy-documents.ts';
import type { OrgManifest } from '../manifests/load.ts';
import { textDigest } from './policy-documents.ts';

const diff = z.object({ from: z.string().nullable(), to: z.string() });

/** An org's policy documents in the file. */
export const savedDocumentsSchema = z.object({
  digest: z.string(),
  changes: z.array(
    z.object({
      action: z.enum(['create', 'update']),
      name: z.string(),
      version: z.number().nullable(),
      fields: z.object({ content: diff.optional(), description: diff.optional() }),
      /** The exact text the upload sends. */
      content: z.string(),
      description: z.string().optional(),
    }),
  ),
  unchanged: z.array(z.string()),
  notManaged: z.array(z.string()),
});

export type SavedDocuments = z.infer<typeof savedDocumentsSchema>;

/** sha256 of the documents the service holds (name, description, latest version and text). */
export function policyDocumentsDigest(observed: readonly ObservedPolicyDocument[]): string {
  const canonical = [...observed]
    .sort((a, b) => compareNames(a.name, b.name))
    .map((doc) => [
      doc.name,
      doc.description,
      doc.latest?.version ?? null,
      doc.latest === undefined ? null : textDigest(doc.latest.content),
    ]);
  return textDigest(JSON.stringify(canonical));
}

/** What the file holds of an org's policy documents. */
export function saveDocuments(
  observed: readonly ObservedPolicyDocument[],
  plan: PolicyDocumentPlan,
): SavedDocuments {
  return {
    digest: policyDocumentsDigest(observed),
    changes: plan.changes.map((change) => ({
      action: change.action,
      name: change.name,
      version: change.version,
      fields: change.fields as SavedDocuments['changes'][number]['fields'],
      content: change.content,
      ...(change.description === undefined ? {} : { description: change.description }),
    })),
    unchanged: [...plan.unchanged],
    notManaged: [...plan.notManaged],
  };
}

/** The plan a saved org's policy documents describe, to upload exactly that. */
export function documentsFromSaved(saved: SavedDocuments): PolicyDocumentPlan {
  return {
    changes: saved.changes.map((change) => ({
      action: change.action,
      name: change.name,
      version: change.version,
      fields: change.fields,
      content: change.content,
      ...(change.description === undefined ? {} : { description: change.description }),
    })),
    unchanged: saved.unchanged,
    notManaged: saved.notManaged,
  };
}

const where = (org: string, name: string) => `org ${quoted(org)}, policy document ${quoted(name)}`;

/** Each upload sends what its fields show: the text's digest, the description. */
export function documentSelfDisagreements(org: string, saved: SavedDocuments): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const change of saved.changes) {
    const at = where(org, change.name);
    if (seen.has(change.name)) problems.push(`${at}: the plan has two uploads for it`);
    seen.add(change.name);
    const content = change.fields.content;
    if (content !== undefined && content.to !== textDigest(change.content)) {
      problems.push(`${at}: the upload's text does not hash to the digest its fields show`);
    }
    const description = change.fields.description;
    if (description !== undefined && description.to !== change.description) {
      problems.push(`${at}: the upload does not send the description its fields show`);
    }
    if (content === undefined && description === undefined) {
      problems.push(`${at}: the upload shows no field that differs`);
    }
  }
  return problems;
}

/**
 * Each upload agrees with the manifests: the document is declared with the same description, and
 * its file holds the text the upload sends (exactly, when the upload is for the text).
 */
export function documentManifestDisagreements(
  saved: SavedDocuments,
  manifest: OrgManifest,
): string[] {
  const declared = new Map((manifest.policies ?? []).map((doc) => [doc.name, doc]));
  const problems: string[] = [];
  for (const change of saved.changes) {
    const at = where(manifest.org, change.name);
    const doc = declared.get(change.name);
    if (doc === undefined) {
      problems.push(`${at}: the plan uploads it, but no manifest declares it`);
      continue;
    }
    if (doc.description !== change.description) {
      const plan =
        change.description === undefined ? 'sends none' : `sends ${shown(change.description)}`;
      const manifests =
        doc.description === undefined ? 'declare none' : `declare ${shown(doc.description)}`;
      problems.push(`${at}: description: the plan ${plan}, the manifests ${manifests}`);
    }
    const same =
      change.fields.content === undefined
        ? samePolicyText(doc.content, change.content)
        : doc.content === change.content;
    if (!same) {
      problems.push(
        `${at}: its file ${doc.file} no longer holds the text the plan uploads (the plan sends ${textDigest(change.content)}, the file holds ${textDigest(doc.content)})`,
      );
    }
  }
  for (const name of saved.unchanged) {
    if (!declared.has(name))
      problems.push(
        `${where(manifest.org, name)}: the plan has it unchanged, but no manifest declares it`,
      );
  }
  return problems;
}

function shown(text: string): string {
  const json = escapeJson(JSON.stringify(text));
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}
