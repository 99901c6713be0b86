/**
 * The integrity digest of a saved plan (`plan --out`): SHA-256 over the canonical JSON of
 * everything in the file except the digest itself, stored in the file as `integrity` and checked
 * by `sync --plan` before anything else is believed. It finds an accidental or partial edit, a
 * `desired` value changed while `fields` stay, and a cut file; it cannot stop someone who can
 * rewrite the whole file, who can compute the digest again (docs/cli.md, "Saved plans").
 */
import { escapeJson } from '../core/escape.ts';
import { type Mask, maskDeep } from '../core/mask.ts';
import * as crypto from 'node:crypto';

/** The key of the digest in the file. */
export const INTEGRITY_KEY = 'integrity';

/** What a digest looks like in the file. */
export const INTEGRITY_PATTERN = /^sha256:[0-9a-f]{64}$/;

/**
 * JSON text of a parsed JSON value with every object's keys sorted (by UTF-16 code unit) and no
 * whitespace: one text for one value, whatever the order its keys were written in. Strings and
 * numbers are written as JSON.stringify writes them. `omit`: a key left out of the top object.
 */
export function canonicalJson(value: unknown, omit?: string): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item !== undefined && key !== omit)
      members.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${members.join(',')}}`;
}

/** The digest of a plan's content: everything but the digest itself. */
export function integrityOf(plan: Readonly<Record<string, unknown>>): string {
  const text = canonicalJson(plan, INTEGRITY_KEY);
  return `sha256:${crypto.createHash('sha256').update(text).digest('hex')}`;
}

/**
 * The text of a plan file: `content` with its secrets masked first (the digest covers what the
 * file holds; what the plan sends holds none: saved-plan.ts, `unsavable`), then sealed with its
 * digest after `kind` and `version`, indented, with the unsafe characters \u-escaped (the digest
 * is of the parsed content, which the escapes do not change).
 */
export function planFileText(content: object, mask: Mask): string {
  const masked = maskDeep(JSON.parse(JSON.stringify(content)) as Record<string, unknown>, mask);
  const { kind, version, ...rest } = masked;
  const sealed = { kind, version, [INTEGRITY_KEY]: integrityOf(masked), ...rest };
  return escapeJson(`${JSON.stringify(sealed, null, 2)}\n`);
}

/**
 * Why a parsed plan file's digest cannot vouch for it (missing, malformed, or not its content's),
 * or undefined when it does.
 */
export function integrityProblem(plan: Readonly<Record<string, unknown>>): string | undefined {
  const recorded = plan[INTEGRITY_KEY];
  if (recorded === undefined)
    return 'it has no integrity digest, and a plan that is not sealed cannot be trusted';
  const changed = 'it was changed or damaged after "envsync plan --out" wrote it';
  if (typeof recorded !== 'string' || !INTEGRITY_PATTERN.test(recorded))
    return `its integrity digest is not a sha256 digest: ${changed}`;
  const computed = integrityOf(plan);
  if (recorded !== computed) {
    return `its integrity digest does not match its content (the file says ${recorded}, its content hashes to ${computed}): ${changed}, so it is not the plan that was reviewed`;
  }
  return undefined;
}
