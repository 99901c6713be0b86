/**
 * Policy documents as code (the `kosli` dialect): what the manifests' top-level `policies:`
 * declare, what the service holds, and what must be uploaded. The shell hashes the texts.
 */
import type { DesiredEnvironment } from './model.ts';
import { compareNames, sortedByName } from './names.ts';

export interface DeclaredPolicyDocument {
  readonly name: string;
  /** Managed only when declared: left out, an upload carries none and the service keeps its own. */
  readonly description?: string | undefined;
  /** The policy file's text, exactly as read. */
  readonly content: string;
  /** The policy file as shown to people. */
  readonly file: string;
  /** Where the entry is declared, its YAML path included (`policies[0]`). */
  readonly source: {
    readonly file: string;
    readonly line: number;
    readonly column: number;
    readonly path: string;
  };
}

/** A document as the service holds it, with its latest version (the highest number). */
export interface ObservedPolicyDocument {
  readonly name: string;
  readonly description: string;
  readonly latest?: { readonly version: number; readonly content: string } | undefined;
}

/** `from` is null for a create, and for content the service has no version of. */
type PolicyDocumentDiff = { readonly from: string | null; readonly to: string } | undefined;

export interface PolicyDocumentChange {
  readonly action: 'create' | 'update';
  readonly name: string;
  /** The latest version the service holds (what was compared against); null when none. */
  readonly version: number | null;
  /** `content` as digests (`sha256:...`), `description` as text. */
  readonly fields: {
    readonly content?: PolicyDocumentDiff;
    readonly description?: PolicyDocumentDiff;
  };
  /**
   * The file's text when the content differs, else the service's own latest text (a change of the
   * description alone must not make a version for a trailing newline).
   */
  readonly content: string;
  /** Undefined: none sent (the service keeps its own). */
  readonly description?: string | undefined;
}

export interface PolicyDocumentPlan {
  readonly changes: readonly PolicyDocumentChange[];
  readonly unchanged: readonly string[];
  /** On the service, in no manifest: never deleted (no delete is published). */
  readonly notManaged: readonly string[];
}

/** Whether two policy texts are the same, trailing line breaks (LF or CRLF) aside. */
export function samePolicyText(a: string, b: string): boolean {
  const trimmed = (text: string) => text.replace(/(?:\r?\n)+$/, '');
  return a === b || trimmed(a) === trimmed(b);
}

/**
 * A create for each declared document the service does not hold, an update when the content or a
 * declared description differs. `digest` names a text in the plan (the shell's sha256).
 */
export function planPolicyDocuments(
  declared: readonly DeclaredPolicyDocument[],
  observed: readonly ObservedPolicyDocument[],
  digest: (text: string) => string,
): PolicyDocumentPlan {
  const held = new Map(observed.map((doc) => [doc.name, doc]));
  const changes: PolicyDocumentChange[] = [];
  const unchanged: string[] = [];
  for (const doc of sortedByName(declared)) {
    const remote = held.get(doc.name);
    const latest = remote?.latest;
    const content = latest === undefined || !samePolicyText(latest.content, doc.content);
    const description = doc.description !== undefined && doc.description !== remote?.description;
    if (remote !== undefined && !content && !description) {
      unchanged.push(doc.name);
      continue;
    }
    const from = (text: string | undefined) => (remote === undefined ? null : (text ?? null));
    changes.push({
      action: remote === undefined ? 'create' : 'update',
      name: doc.name,
      version: latest?.version ?? null,
      fields: {
        ...(content
          ? { content: { from: from(latest && digest(latest.content)), to: digest(doc.content) } }
          : {}),
        ...(description
          ? { description: { from: from(remote?.description), to: doc.description } }
          : {}),
      },
      content: content ? doc.content : (latest?.content ?? doc.content),
      ...(doc.description === undefined ? {} : { description: doc.description }),
    });
  }
  const named = new Set(declared.map((doc) => doc.name));
  const notManaged = [...new Set(observed.map((doc) => doc.name))].filter((n) => !named.has(n));
  return { changes, unchanged, notManaged: notManaged.sort(compareNames) };
}

/** The policies environments attach that neither the manifests declare nor the service holds. */
export function unknownPolicies(
  environments: readonly DesiredEnvironment[],
  declared: readonly { readonly name: string }[],
  observed: readonly { readonly name: string }[],
): { readonly env: DesiredEnvironment; readonly policy: string }[] {
  const known = new Set([...declared, ...observed].map((doc) => doc.name));
  return environments.flatMap((env) =>
    (env.policies ?? []).filter((policy) => !known.has(policy)).map((policy) => ({ env, policy })),
  );
}

/** Whether an org's manifests declare or attach a policy document. */
export function needsPolicyDocuments(
  environments: readonly DesiredEnvironment[],
  declared: readonly unknown[],
): boolean {
  return declared.length > 0 || environments.some((env) => (env.policies?.length ?? 0) > 0);
}

/** The comment an upload carries: the git revision of the manifests when known. */
export function uploadComment(revision: string | undefined): string {
  return revision === undefined || revision === ''
    ? 'envsync'
    : `envsync: git revision ${revision}`;
}
