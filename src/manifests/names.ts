/**
 * The constants the manifest schema is built from, without the schema: the fast path (accept.ts)
 * and the commands read them without loading zod.
 */

/** Environment and organization names, as the API accepts them in the path and the body. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The environment types the contract allows (case-sensitive). */
export const ENVIRONMENT_TYPES = ['K8S', 'S3', 'logical'] as const;
