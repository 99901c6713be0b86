/**
 * Where `export --out DIR` writes an org's policy documents: `DIR/policies/<org>/<name>.yaml`,
 * named from `DIR/<org>.yaml` as `policies/<org>/<name>.yaml`. The folders are made one at a time
 * and never through a symbolic link: a link (or anything but a folder) on the way is refused.
 */
import path from 'node:path';
import { fsPromises } from '../runtime/builtins.ts';
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

/** Makes `dir` (its parent exists), or checks that it is a folder and not a symbolic link. */
async function folder(dir: string): Promise<void> {
  const found = await fsPromises()
    .lstat(dir)
    .catch(() => undefined);
  if (found?.isSymbolicLink() === true) {
    throw new ConfigError(
      `${dir} is a symbolic link (export never writes through one); remove it, or point --out elsewhere`,
    );
  }
  if (found !== undefined && !found.isDirectory()) {
    throw new ConfigError(`${dir} is in the way: export writes policy files into a folder there`);
  }
  if (found === undefined) {
    await fsPromises()
      .mkdir(dir)
      .catch((error: unknown) => {
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
