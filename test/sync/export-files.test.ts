/** `export --out DIR` never follows a symbolic link, and writes names every file system takes. */
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fileNameProblem } from '../../src/commands/export.ts';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';

const TOKEN = 'tok-export-5e1f0a';

let api: Awaited<ReturnType<typeof startFakeApi>>;
let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  api = await startFakeApi((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify([{ name: 'web', type: 'K8S', description: 'Web' }]));
  });
});
afterAll(() => api.close());
beforeEach(async () => {
  tmp = await tempDir();
  await mkdir(tmp.path('out'));
});
afterEach(() => tmp.cleanup());

const args = (out: string, extra: string[]) => [
  ...`export --org acme --out ${out} --api-url ${api.url}`.split(' '),
  ...extra,
];
const where = () => ({ cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN } });
const exportTo = (...extra: string[]) => envsyncInProcess(args('out', extra), where());
/** `exportTo` in a child process: the exit code and stderr of the real command. */
const exportInChild = (...extra: string[]) => envsync(args('out', extra), where());

/** The names in `out`, temp files included (none may be left). */
const names = () => readdir(tmp.path('out')).then((list) => list.sort());

describe('export --out never writes through a symbolic link', () => {
  it('refuses a symlink at the target, dangling or to a file, and leaves what it points at as it was', async () => {
    await symlink(tmp.path('elsewhere.yaml'), tmp.path('out/acme.yaml'));
    const dangling = await exportInChild();
    expect(dangling.code).toBe(1);
    expect(dangling.stderr).toContain(
      'acme.yaml is a symbolic link (export never writes through one)',
    );
    await expect(lstat(tmp.path('elsewhere.yaml'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readlink(tmp.path('out/acme.yaml'))).toBe(tmp.path('elsewhere.yaml'));
    expect(await names()).toEqual(['acme.yaml']);
    await writeFile(tmp.path('elsewhere.yaml'), 'keep me\n');
    const toFile = await exportTo();
    expect(toFile.code).toBe(1);
    expect(toFile.stderr).toContain('is a symbolic link');
    expect(await readFile(tmp.path('elsewhere.yaml'), 'utf8')).toBe('keep me\n');
  });

  it('with --force replaces the link itself with a regular file, whole, and leaves no temp file; a file needs --force', async () => {
    await writeFile(tmp.path('precious.txt'), 'keep me\n');
    await symlink(tmp.path('precious.txt'), tmp.path('out/acme.yaml'));
    await symlink(tmp.path('nowhere.yaml'), tmp.path('out/dangling.yaml'));
    const result = await exportTo('--force');
    expect(result.code, result.stderr).toBe(0);
    expect((await lstat(tmp.path('out/acme.yaml'))).isSymbolicLink()).toBe(false);
    expect(await readFile(tmp.path('out/acme.yaml'), 'utf8')).toContain('name: web');
    expect(await readFile(tmp.path('precious.txt'), 'utf8')).toBe('keep me\n');
    await expect(lstat(tmp.path('nowhere.yaml'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await names()).toEqual(['acme.yaml', 'dangling.yaml']);
    const again = await exportTo();
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('acme.yaml already exists; pass --force to overwrite it');
  });

  it('an --out folder that is a symbolic link to nothing is a clear error, and nothing is created where it points', async () => {
    await symlink(tmp.path('nowhere'), tmp.path('dangling'));
    const result = await envsyncInProcess(args('dangling', []), where());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('dangling: cannot create the folder');
    expect(result.stderr).toContain('symbolic link that leads nowhere');
    expect(result.stderr).not.toContain('unexpected error');
    expect(await lstat(tmp.path('nowhere')).catch(() => 'absent')).toBe('absent');
  });
});

describe('the names export writes', () => {
  it.each([
    ['acme.yaml', undefined],
    [`${'x'.repeat(250)}.yaml`, undefined],
    [`${'x'.repeat(251)}.yaml`, /256 bytes long, and a file name may have at most 255/],
    // Bytes of UTF-8, not characters: 127 two-byte letters fit, 128 do not.
    ['\u00e9'.repeat(127), undefined],
    ['\u00e9'.repeat(128), /256 bytes long/],
    ['', /not a file name/],
    ['.', /not a file name/],
    ['..', /not a file name/],
    ['a\u0000b', /a control character/],
    ['a\nb', /a control character/],
    ['a\u0085b', /a control character/],
    ['a/b', /one of \/ \\ < > : " \| \? \*/],
    ['a:b', /one of/],
    ['acme.', /ends with a dot or a space/],
    ['acme ', /ends with a dot or a space/],
    ['CON', /Windows keeps the name for a device/],
    ['lpt1.yaml', /Windows keeps the name/],
    ['console.yaml', undefined],
  ])('%j', (name, problem) => {
    expect(fileNameProblem(name) ?? 'none').toMatch(problem ?? /^none$/);
  });
});
