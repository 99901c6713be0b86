import { createTwoFilesPatch } from 'diff';
import path from 'node:path';
import { bool } from '../config/parsers.ts';
import { resolveValues, type Flags, type SettingsTable } from '../config/setting.ts';
import { resolveSettings } from '../config/settings.ts';
import { RETIRED_KEYS } from '../core/fields.ts';
import { discoverManifestFiles, readManifestFile } from '../manifests/discover.ts';
import { loadIgnoreRules } from '../manifests/ignore-rules.ts';
import { withoutRetiredKeys } from '../manifests/migrate.ts';
import { parseManifest } from '../manifests/parse.ts';
import { writeFileAtomic } from '../state/files.ts';
import { escapeText } from '../core/escape.ts';
import { ConfigError } from '../runtime/errors.ts';
import { commandLogger, type CommandContext } from './context.ts';
import { rootError } from './manifests.ts';

export const settings = {
  write: {
    flag: '--write',
    commands: ['migrate'],
    group: 'manifests',
    help: 'write the rewritten manifests in place (without it, only show the diff)',
    parse: bool,
    default: false,
  },
} as const satisfies SettingsTable;

/** `envsync migrate [--write]`: the manifests without the keys the service retired, as a diff. */
export async function run(ctx: CommandContext, flags: Flags): Promise<number> {
  const resolved = await resolveSettings(flags, ctx.env, ctx.cwd);
  const { write } = resolveValues(settings, { flags, env: ctx.env });
  const logger = commandLogger(ctx, resolved, 'migrate');
  const root = path.resolve(ctx.cwd, resolved.manifests);
  let files;
  try {
    const rules = loadIgnoreRules([root], resolved.exclude ?? [], resolved.maxFileBytes);
    files = discoverManifestFiles(resolved.manifests, ctx.cwd, undefined, rules).files;
  } catch (error) {
    throw rootError(error, root);
  }
  const failures: string[] = [];
  let changed = 0;
  for (const file of files) {
    const read = readManifestFile(file.path, resolved.maxFileBytes);
    const fail = (why: string) => failures.push(`${escapeText(file.display)}: ${why}`);
    if (!read.ok) fail(read.message);
    if (!read.ok || parseManifest(read.text, file.display).notManifest === true) continue;
    let migrated;
    try {
      migrated = withoutRetiredKeys(read.text, RETIRED_KEYS);
    } catch (error) {
      fail((error as Error).message);
      continue;
    }
    if (migrated.removed.length === 0) continue;
    changed++;
    const [a, b] = [`a/${file.display}`, `b/${file.display}`];
    const patch = createTwoFilesPatch(a, b, read.text, migrated.text);
    ctx.stdout.write(patch.split('\n').map(escapeText).join('\n')); // shown, not for git apply
    for (const { key, line, column } of migrated.removed)
      logger.info({ file: file.display, key }, `${file.display}:${line}:${column} ${key}: removed`);
    if (write) await writeFileAtomic(file.path, migrated.text);
  }
  ctx.stderr.write(
    changed === 0 && failures.length === 0
      ? 'migrate: every manifest is up to date\n'
      : `migrate: ${changed} file(s) ${write ? 'rewritten' : 'would be rewritten (run again with --write)'}\n`,
  );
  if (failures.length > 0) throw new ConfigError(`not migrated:\n${failures.join('\n')}`);
  return changed > 0 && !write ? 2 : 0;
}
