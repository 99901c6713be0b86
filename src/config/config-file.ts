/** The config file (`--config FILE`, YAML): see config/envsync.example.yaml. */
import { isMap, isScalar, LineCounter, parseDocument, type Node } from 'yaml';
import * as z from 'zod';
import { suggest } from '../core/suggest.ts';
import { ConfigError, UsageError } from '../runtime/errors.ts';
import { READ_LIMITS, readRegularText } from '../runtime/read-file.ts';
import { parseOptions } from '../runtime/yaml-options.ts';
import type { ConfigFile, Raw, Setting, SettingsTable } from './setting.ts';

/** The config file's schema: each key holds what its setting's parser says the file may hold. */
export function configFileSchema(table: SettingsTable) {
  return z.strictObject(
    Object.fromEntries(
      Object.values(table).flatMap((s) =>
        s.file === undefined ? [] : [[s.file, (s.parse.schema ?? z.never()).optional()]],
      ),
    ),
  );
}

/**
 * Reads a config file for the settings of `table`; every problem at once, each located. A value
 * goes through its setting's parser here, so that a bad one is reported where it is written.
 */
export async function readConfigFile(
  file: string,
  table: SettingsTable,
  timeoutMs?: number,
): Promise<ConfigFile> {
  const text = await readRegularText(file, {
    subject: `config file ${file}`,
    fix: 'point --config at a file',
    maxBytes: READ_LIMITS.config,
    limit: 'for a config file',
    timeoutMs,
  });
  const lineCounter = new LineCounter();
  // Switches are true or false only, as in manifests: `True` is the string "True" (an error).
  const doc = parseDocument(text, parseOptions(lineCounter));
  const where = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return `config file ${file}:${line}:${col}`;
  };
  const syntax = doc.errors[0];
  if (syntax !== undefined) {
    const what = syntax.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError(`${where(syntax.pos[0])}: not valid YAML: ${what}`);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (error) {
    throw new ConfigError(`config file ${file} cannot be read: ${(error as Error).message}`);
  }
  /** Where the value of `key` (or the key) is written; the document's start otherwise. */
  const offsetOf = (key: string | undefined, ofKey = false): number => {
    const root = doc.contents;
    const pair =
      key !== undefined && isMap(root)
        ? root.items.find((item) => isScalar(item.key) && item.key.value === key)
        : undefined;
    const node = (ofKey ? pair?.key : (pair?.value ?? pair?.key)) as Node | null | undefined;
    return node?.range?.[0] ?? root?.range?.[0] ?? 0;
  };
  const values = (data !== null && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  if (Object.hasOwn(values, 'token')) {
    throw new ConfigError(
      `${where(offsetOf('token', true))} token: is not read from a config file (it would end up in git); set ENVSYNC_TOKEN or tokenFile`,
    );
  }
  const result = configFileSchema(table).safeParse(data);
  const problems: { offset: number; text: string }[] = [];
  const schemaSays = new Map<string, string>();
  const settings: Setting[] = Object.values(table).filter((s) => s.file !== undefined);
  const keys = settings.map((s) => s.file ?? '');
  for (const issue of result.error?.issues ?? []) {
    const key = issue.path[0] === undefined ? undefined : String(issue.path[0]);
    if (issue.code === 'unrecognized_keys') {
      for (const unknown of issue.keys) {
        const near = suggest(unknown, keys);
        problems.push({
          offset: offsetOf(unknown, true),
          text: `${unknown}: unknown key${near === undefined ? '' : ` (did you mean "${near}"?)`}; the keys are listed in config/envsync.example.yaml`,
        });
      }
    } else if (key === undefined) {
      problems.push({ offset: offsetOf(undefined), text: `${issue.message} (a mapping of keys)` });
    } else if (!schemaSays.has(key)) {
      schemaSays.set(key, `${issue.path.join('.')}: ${issue.message}`);
    }
  }
  // A parser's words are clearer than the schema's (a type), which are the fallback.
  for (const { file: key = '', parse } of settings) {
    let said = schemaSays.get(key);
    if (values[key] !== undefined && values[key] !== null) {
      try {
        parse(values[key] as Raw, key);
      } catch (error) {
        if (!(error instanceof ConfigError || error instanceof UsageError)) throw error;
        said = error.message;
      }
    }
    if (said !== undefined) problems.push({ offset: offsetOf(key), text: said });
  }
  if (problems.length > 0) {
    problems.sort((a, b) => a.offset - b.offset);
    throw new ConfigError(problems.map((p) => `${where(p.offset)} ${p.text}`).join('\n'));
  }
  return result.data as ConfigFile;
}
