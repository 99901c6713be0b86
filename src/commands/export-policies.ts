/**
 * Where `export --out DIR` writes an org's policy documents: `DIR/policies/<org>/<name>.yaml`,
 * named from `DIR/<org>.yaml` as `policies/<org>/<name>.yaml`; whether every name it writes can be
 * a file's; and the folders, made one at a time and never through a symbolic link: a link (or
 * anything but a folder) on the way is refused.
 */
import path from 'node:path';
import * as fsPromises from 'node:fs/promises';
import { ConfigError } from '../runtime/errors.ts';

/** The folder of an org's policy files, relative to the export folder (and to its manifest). */
export function policyFolder(org: string): string {
  return `policies/${org}`;
}

/** Every policy file an export writes: its org, its absolute path and its exact text. */
export function policyTargets(
  outDir: string,
  exported: readonly {
    readonly org: string;
    readonly policyFiles: readonly { readonly path: string; readonly text: string }[];
  }[],
): { org: string; file: string; text: string }[] {
  return exported.flatMap(({ org, policyFiles }) =>
    policyFiles.map(({ path: relative, text }) => ({
      org,
      file: path.join(outDir, ...relative.split('/')),
      text,
    })),
  );
}

/** The longest file name, in bytes of UTF-8, of the common file systems (ext4, XFS, APFS, NTFS). */
const MAX_NAME_BYTES = 255;

/**
 * Why `name` cannot be the name of a file or folder in a repository of manifests checked out on
 * Linux, macOS or Windows, or undefined when it can.
 */
export function fileNameProblem(name: string): string | undefined {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES) {
    return `the name is ${bytes} bytes long, and a file name may have at most ${MAX_NAME_BYTES}`;
  }
  if (name === '' || name === '.' || name === '..') return 'that is not a file name';
  // oxlint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f/\\<>:"|?*]/.test(name)) {
    return 'the name holds a control character or one of / \\ < > : " | ? *';
  }
  if (/[. ]$/.test(name)) return 'the name ends with a dot or a space, which Windows drops';
  if (/^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i.test(name)) {
    return 'Windows keeps the name for a device';
  }
  return undefined;
}

/** A name from the service in a message: the first 60 characters of a long one. */
const brief = (text: string) => (text.length > 60 ? `${text.slice(0, 57)}...` : text);

/**
 * Every file of an export that cannot be written under its name (see fileNameProblem), and every
 * two that differ only in case (one file on the case-insensitive file systems of macOS and
 * Windows), each with its org and what to do. Checked before anything is written.
 */
export function exportNameProblems(
  exported: readonly {
    readonly org: string;
    readonly policyFiles: readonly { readonly path: string }[];
  }[],
): string[] {
  const problems: string[] = [];
  const folded = new Map<string, string>();
  const check = (relative: string, what: string, todo: string) => {
    const why = relative
      .split('/')
      .map(fileNameProblem)
      .find((problem) => problem !== undefined);
    const twin = folded.get(relative.toLowerCase());
    if (why !== undefined) problems.push(`${what} (${brief(relative)}): ${why}; ${todo}`);
    else if (twin !== undefined) {
      problems.push(`${what} (${relative}) and ${twin} differ only in case: ${todo}`);
    } else folded.set(relative.toLowerCase(), relative);
  };
  for (const { org, policyFiles } of exported) {
    check(`${org}.yaml`, `org ${brief(org)}`, 'export that org without --out (to stdout)');
    for (const { path: relative } of policyFiles) {
      const name = relative.slice(relative.lastIndexOf('/') + 1, -'.yaml'.length);
      check(
        relative,
        `org ${brief(org)}: policy ${brief(name)}`,
        'rename the policy on the service, or export the org without --out (its manifest then names the policy in a comment)',
      );
    }
  }
  return problems;
}

/** Makes `dir` (its parent exists), or checks that it is a folder and not a symbolic link. */
async function folder(dir: string): Promise<void> {
  const found = await fsPromises.lstat(dir).catch(() => undefined);
  if (found?.isSymbolicLink() === true) {
    throw new ConfigError(
      `${dir} is a symbolic link (export never writes through one); remove it, or point --out elsewhere`,
    );
  }
  if (found !== undefined && !found.isDirectory()) {
    throw new ConfigError(`${dir} is in the way: export writes policy files into a folder there`);
  }
  if (found === undefined) {
    await fsPromises.mkdir(dir).catch((error: unknown) => {
      // Made meanwhile by someone else: checked again, as if it had been there.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return folder(dir);
    });
  }
}

/** Makes `DIR/policies/<org>` for each org that has policy files to write. */
export async function preparePolicyFolders(
  outDir: string,
  exported: readonly { readonly org: string; readonly policyFiles: readonly unknown[] }[],
): Promise<void> {
  const orgs = exported.filter((r) => r.policyFiles.length > 0).map((r) => r.org);
  if (orgs.length === 0) return;
  await folder(path.join(outDir, 'policies'));
  for (const org of orgs) await folder(path.join(outDir, ...policyFolder(org).split('/')));
}
