/**
 * Every file of the repository that is generated, and how: `npm run generate` writes them, and
 * test/generated.test.ts fails, naming the file and this command, when one differs from what its
 * source says it should hold. Each source is imported only when its file is written, so that a
 * broken generated file never stops the generator from writing the others, or itself.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, type FormatConfig } from 'oxfmt';

/** The command that writes every generated file (failure messages quote it). */
export const REGENERATE = 'npm run generate';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface GeneratedFile {
  /** From the repository's root, with forward slashes. */
  readonly path: string;
  /** What the file is generated from, for people. */
  readonly from: string;
  /** What the file should hold, given what it holds now (for a file generated only in part). */
  render(current: string | undefined): Promise<string>;
}

/** The formatter's settings for this repository (`.oxfmtrc.json`, without its ignore list). */
async function readFormatterSettings(): Promise<FormatConfig> {
  const text = await readFile(path.join(ROOT, '.oxfmtrc.json'), 'utf8');
  const {
    $schema: _schema,
    ignorePatterns: _ignored,
    ...settings
  } = JSON.parse(text) as {
    $schema?: string;
    ignorePatterns?: string[];
  } & FormatConfig;
  return settings;
}

/** Read once per run, by the first file that is formatted. */
let formatterSettings: Promise<FormatConfig> | undefined;

/** Source text as oxfmt leaves it with the repository's settings, so the check passes as written. */
async function formatted(text: string, file: string): Promise<string> {
  formatterSettings ??= readFormatterSettings();
  const result = await format(file, text, await formatterSettings);
  if (result.errors.length > 0) {
    throw new Error(
      `${file}: the formatter refused the generated text: ${result.errors.map((e) => e.message).join('; ')}`,
    );
  }
  return result.code;
}

export const GENERATED_FILES: readonly GeneratedFile[] = [
  {
    path: 'config/manifest.schema.json',
    from: 'the manifest schema (src/manifests/schema.ts), as `envsync schema` prints it',
    async render() {
      const { manifestJsonSchema } = await import('../../src/manifests/schema.ts');
      return `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
    },
  },
  {
    path: 'docs/flags.md',
    from: 'the settings table (src/config/)',
    async render() {
      const { flagsDoc } = await import('../../src/commands/help.ts');
      const { allSettings } = await import('../../src/main.ts');
      return flagsDoc(await allSettings());
    },
  },
  {
    path: 'docs/manifests.md',
    from: 'the field registry (src/core/fields.ts), between its field markers',
    async render(current) {
      const { fieldsSection, FIELDS_MARKERS } = await import('./fields-doc.ts');
      const { withSection } = await import('./section.ts');
      const { FIELD_LIST } = await import('../../src/core/fields.ts');
      const section = fieldsSection(FIELD_LIST);
      const page = withSection(current ?? '', section, this.path, FIELDS_MARKERS);
      return formatted(page, this.path);
    },
  },
  {
    path: 'charts/envsync/README.md',
    from: "the chart's values.schema.json and values.yaml, between its value markers",
    async render(current) {
      const { valuesSection, VALUES_MARKERS } = await import('./chart-readme.ts');
      const { withSection } = await import('./section.ts');
      const { parse } = await import('yaml');
      const chart = path.join(ROOT, 'charts/envsync');
      const schema = JSON.parse(await readFile(path.join(chart, 'values.schema.json'), 'utf8'));
      const defaults = parse(await readFile(path.join(chart, 'values.yaml'), 'utf8'));
      const section = valuesSection(schema, defaults);
      return formatted(withSection(current ?? '', section, this.path, VALUES_MARKERS), this.path);
    },
  },
  {
    path: '.oxlintrc.json',
    from: 'the layers, start-up rules and time rules (scripts/generate/lint-config.ts)',
    async render() {
      const { lintConfig } = await import('./lint-config.ts');
      return formatted(`${JSON.stringify(lintConfig(), null, 2)}\n`, this.path);
    },
  },
];

/** A generated file whose committed text is not what its source says. */
export interface StaleFile {
  readonly file: GeneratedFile;
  readonly expected: string;
}

async function readOrUndefined(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The files (all, or those named) that differ from what they should hold under `root`. */
export async function staleFiles(
  root: string = ROOT,
  only: readonly string[] = [],
): Promise<StaleFile[]> {
  const unknown = only.filter((name) => !GENERATED_FILES.some((file) => file.path === name));
  if (unknown.length > 0) {
    const known = GENERATED_FILES.map((file) => file.path).join(', ');
    throw new Error(`not a generated file: ${unknown.join(', ')} (they are: ${known})`);
  }
  const chosen = GENERATED_FILES.filter((file) => only.length === 0 || only.includes(file.path));
  const stale: StaleFile[] = [];
  for (const file of chosen) {
    const current = await readOrUndefined(path.join(root, file.path));
    const expected = await file.render(current);
    if (current !== expected) stale.push({ file, expected });
  }
  return stale;
}

/** Writes each stale file; returns the paths written. */
export async function writeStale(
  stale: readonly StaleFile[],
  root: string = ROOT,
): Promise<string[]> {
  for (const { file, expected } of stale) await writeFile(path.join(root, file.path), expected);
  return stale.map(({ file }) => file.path);
}
