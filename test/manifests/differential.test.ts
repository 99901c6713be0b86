import { describe, expect, it } from 'vitest';
import { FIELD_LIST } from '../../src/core/fields.ts';
import type { ParsedManifest } from '../../src/manifests/parse.ts';
import { parseManifestFast } from '../../src/manifests/parse-fast.ts';
import { parseManifestLocated } from '../../src/manifests/parse-located.ts';
import { manifestText } from '../helpers/yaml-fuzz.ts';

/**
 * The two parsers agree: on every text the fast path accepts, the position-tracking path finds
 * no problem and reads the same documents, or both take the file for other YAML, skipped. (Where the fast path refuses, the located path is the
 * only reader, so there is nothing to compare.) `npm test` runs a sample that fits its budget;
 * `ENVSYNC_FUZZ_FULL=1 npx vitest run test/manifests/differential.test.ts` runs 100,000 texts,
 * and ENVSYNC_FUZZ_SEED picks another seed.
 */

const FULL = process.env['ENVSYNC_FUZZ_FULL'] === '1';
const COUNT = FULL ? 100_000 : 5_000;
const SEED = Number(process.env['ENVSYNC_FUZZ_SEED'] ?? '13');

/** What a parse says, without positions: the documents' values, or the problems' count. */
function reading(parsed: ParsedManifest): unknown {
  return {
    notManifest: parsed.notManifest === true,
    problems: parsed.problems.length,
    documents: parsed.documents.map((doc) => ({
      org: doc.org,
      prune: doc.prune?.value ?? null,
      environments: doc.environments.map((env) => [
        env.name,
        env.renamedFrom ?? null,
        ...FIELD_LIST.map((spec) => env[spec.name] ?? null),
      ]),
    })),
  };
}

/**
 * Undefined when the parsers agree on `text`, else both readings. `fast` is the fast path's
 * reading of it, when the caller has it already.
 */
export function disagreement(
  text: string,
  fast: ParsedManifest | undefined = parseManifestFast(text),
): { fast: unknown; located: unknown } | undefined {
  if (fast === undefined) return undefined;
  const located = parseManifestLocated(text, 'fuzz.yaml');
  const a = reading(fast);
  const b = reading(located);
  return JSON.stringify(a) === JSON.stringify(b) ? undefined : { fast: a, located: b };
}

describe('the fast and the position-tracking parser', () => {
  it('agree on a directive right after the byte order mark that starts the file', () => {
    // js-yaml skips the unknown directive, `yaml` reports it: the fast path must leave the text.
    const text = '\ufeff%YAML! 1.2\n---\nenvironments: []\norg: "acme"';
    expect(parseManifestFast(text)).toBeUndefined();
    expect(parseManifestLocated(text, 'f.yaml').problems).toHaveLength(1);
  });

  it('agree on a list right after the byte order mark that starts the file', () => {
    // js-yaml reads the list (other YAML, skipped), `yaml` a syntax error: the fast path leaves it.
    const text = '\ufeff- one\n- two\n';
    expect(parseManifestFast(text)).toBeUndefined();
    expect(parseManifestLocated(text, 'f.yaml').problems.length).toBeGreaterThan(0);
    expect(parseManifestFast('- one\n- two\n')).toEqual({
      documents: [],
      problems: [],
      notManifest: true,
    });
  });

  it(
    `agree on every generated text the fast path accepts (${COUNT} texts, seed ${SEED})`,
    { timeout: FULL ? 1_800_000 : 60_000 },
    () => {
      const failures: { index: number; text: string; fast: unknown; located: unknown }[] = [];
      let accepted = 0;
      let renamed = 0;
      let skipped = 0;
      for (let index = 0; index < COUNT; index++) {
        const text = manifestText(SEED, index);
        const fast = parseManifestFast(text);
        if (fast !== undefined) accepted++;
        if (fast?.notManifest === true) skipped++;
        if (fast?.documents.some((doc) => doc.environments.some((env) => env.renamedFrom))) {
          renamed++;
        }
        const found = disagreement(text, fast);
        if (found !== undefined) failures.push({ index, text, ...found });
      }
      if (process.env['ENVSYNC_FUZZ_REPORT'] === '1') {
        // Straight to stdout, so that it shows whether the test passes or not.
        const summary = {
          seed: SEED,
          count: COUNT,
          accepted,
          renamed,
          skipped,
          disagreements: failures.length,
        };
        const lines = [summary, ...failures.slice(0, 40)].map((line) => JSON.stringify(line));
        process.stdout.write(`${lines.join('\n')}\n`);
      }
      expect(failures.slice(0, 3)).toEqual([]);
      // Most texts must reach the comparison, or the test proves little; renames among them.
      expect(accepted).toBeGreaterThan(COUNT / 8);
      expect(renamed).toBeGreaterThan(COUNT / 50);
      expect(skipped).toBeGreaterThan(COUNT / 100);
    },
  );
});
