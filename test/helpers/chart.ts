/**
 * The chart's files as the tests use them: its folder, the values files it is linted and
 * rendered with (charts/envsync/ci/), and the values files its schema must refuse
 * (test/fixtures/chart/), each read over the default values file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHART_DIR = fileURLToPath(new URL('../../charts/envsync/', import.meta.url));
const INVALID_DIR = fileURLToPath(new URL('../fixtures/chart/', import.meta.url));

const yamlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();

/** The values files of charts/envsync/ci, from the chart's folder (`ci/...`). */
export const VALUES_FILES = yamlFiles(path.join(CHART_DIR, 'ci')).map((f) => `ci/${f}`);

/** The values file with only what the chart requires, the rest its defaults. */
export const DEFAULT_VALUES = 'ci/default-values.yaml';

export interface InvalidValues {
  /** Its name in test/fixtures/chart. */
  readonly name: string;
  readonly file: string;
  /** The JSON pointer of the value the schema refuses ('' for the root). */
  readonly where: string;
  /** A word every validator's message about it holds: the key, or the rule broken. */
  readonly word: string;
}

/** The values files the schema must refuse; each says in its first line `# refused at WHERE: WORD`. */
export function invalidValues(): InvalidValues[] {
  return yamlFiles(INVALID_DIR).map((name) => {
    const file = path.join(INVALID_DIR, name);
    const header = /^# refused at (\S*): (\S+)$/m.exec(readFileSync(file, 'utf8'));
    if (header === null) throw new Error(`${file}: no "# refused at WHERE: WORD" line`);
    return { name, file, where: header[1] ?? '', word: header[2] ?? '' };
  });
}
