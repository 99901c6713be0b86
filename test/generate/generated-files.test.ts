/**
 * The generated files (scripts/generate/targets.ts) hold what `npm run generate` writes: a file
 * edited by hand, or a source changed without running the command, fails here, with the file and
 * the command in the message.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENERATED_FILES, REGENERATE, ROOT, staleFiles } from '../../scripts/generate/targets.ts';
import { runProcess } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

describe('the generated files', () => {
  it.each(GENERATED_FILES.map((file) => [file.path, file] as const))(
    `%s is what "${REGENERATE}" writes`,
    async (name, file) => {
      const committed = await readFile(path.join(ROOT, name), 'utf8').catch(() => undefined);
      const expected = await file.render(committed);
      expect(committed === expected, `${name} is out of date: run "${REGENERATE}"`).toBe(true);
    },
  );
});

describe('npm run generate', () => {
  let copy: Awaited<ReturnType<typeof tempDir>>;
  const generate = (...args: string[]) =>
    runProcess(
      process.execPath,
      [path.join(ROOT, 'scripts/generate.ts'), '--root', copy.dir, ...args],
      { env: { PATH: process.env.PATH ?? '' } },
    );

  beforeAll(async () => {
    copy = await tempDir('envsync-generate-');
    for (const file of GENERATED_FILES) {
      await mkdir(path.dirname(copy.path(file.path)), { recursive: true });
      await writeFile(copy.path(file.path), await readFile(path.join(ROOT, file.path)));
    }
  });
  afterAll(() => copy.cleanup());

  it('--check names a stale file and the command, and writes nothing; without it, rewrites it', async () => {
    const file = copy.path('src/core/compiled.generated.ts');
    const good = await readFile(file, 'utf8');
    const edited = `${good}// edited by hand\n`;
    await writeFile(file, edited);

    const checked = await generate('--check');
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain('src/core/compiled.generated.ts is out of date');
    expect(checked.stderr).toContain(REGENERATE);
    expect(checked.stderr.split('\n').filter((line) => line.includes('out of date'))).toHaveLength(
      1,
    );
    expect(await readFile(file, 'utf8')).toBe(edited);
    expect((await staleFiles(copy.dir)).map(({ file: stale }) => stale.path)).toEqual([
      'src/core/compiled.generated.ts',
    ]);

    const written = await generate();
    expect(written.code).toBe(0);
    expect(written.stdout).toBe('wrote src/core/compiled.generated.ts\n');
    expect(await readFile(file, 'utf8')).toBe(good);
    expect((await generate('--check')).code).toBe(0);
  });

  it('writes a generated file that is missing, when asked for that file', async () => {
    const file = copy.path('src/core/compiled.generated.ts');
    const good = await readFile(file, 'utf8');
    await rm(file);
    const written = await generate('src/core/compiled.generated.ts');
    expect(written.code).toBe(0);
    expect(written.stdout).toBe('wrote src/core/compiled.generated.ts\n');
    expect(await readFile(file, 'utf8')).toBe(good);
  });

  it('refuses a name that is not a generated file', async () => {
    await expect(staleFiles(copy.dir, ['docs/cli.md'])).rejects.toThrow(
      /^not a generated file: docs\/cli\.md \(they are: src\/core\/compiled\.generated\.ts/,
    );
  });
});
