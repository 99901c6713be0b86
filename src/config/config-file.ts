import * as z from 'zod';
import { SETTINGS } from './settings-table.ts';
import type { FileType } from './setting.ts';

const PLAIN: Record<Exclude<FileType['kind'], 'integer' | 'enum'>, () => z.ZodType> = {
  string: () => z.string(),
  strings: () => z.array(z.string()),
  boolean: () => z.boolean(),
  duration: () => z.union([z.string(), z.literal(0)]),
};

function fieldSchema(type: FileType): z.ZodType {
  if (type.kind === 'enum') return z.enum(type.values);
  if (type.kind === 'integer') {
    const integer = z.number().int().min(type.min);
    return type.max === undefined ? integer : integer.max(type.max);
  }
  return PLAIN[type.kind]();
}

/**
 * The config file (`--config FILE`, YAML), generated from the settings table: every setting with
 * a config key, in table order, all optional; any other key is an error. See
 * config/envsync.example.yaml.
 */
export const configFileSchema = z.strictObject(
  Object.fromEntries(
    Object.values(SETTINGS).flatMap((setting: (typeof SETTINGS)[keyof typeof SETTINGS]) =>
      'file' in setting ? [[setting.file.key, fieldSchema(setting.file.type).optional()]] : [],
    ),
  ),
);
