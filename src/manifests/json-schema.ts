import * as z from 'zod';
import { manifestSchema } from './schema.ts';

/**
 * The JSON Schema (draft 2020-12) of one manifest document, generated from the same zod schema
 * the validator uses, so the two cannot drift apart (a test checks that they agree).
 */
export function manifestJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(manifestSchema, { target: 'draft-2020-12', io: 'input' });
  const { $schema, ...rest } = generated;
  return {
    $schema,
    title: 'envsync manifest',
    ...rest,
  };
}
