import * as z from 'zod';

/**
 * The listing's schema (issue 3; observed-behaviour.md "The listing"): the authority on what a
 * listing may hold, and the words of every error about one. listing.ts reads the usual listing
 * without it and loads it only for anything else.
 */

// z.object strips what it does not know: unknown fields are ignored, and not copied.
export const listedEnvironment = z.object({
  name: z.string().min(1),
  type: z.string(),
  description: z.string().nullable().optional(),
  include_scaling: z.boolean().nullable().optional(),
  policies: z.array(z.string()).nullable().optional(),
});

export const entries = z.array(listedEnvironment);

export const specListing = z.looseObject({ env: entries });

export const pageEnvelope = z.looseObject({
  environments: entries,
  page: z.number().int().min(1).optional(),
  per_page: z.number().int().min(1).optional(),
  total_pages: z.number().int().min(0).optional(),
  total_count: z.number().int().min(0).optional(),
});

export type ListedEnvironment = z.infer<typeof listedEnvironment>;

export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const where = issue.path.length === 0 ? '' : ` at ${issue.path.map(String).join('.')}`;
  return `${issue.message}${where}`;
}
