/** The emulator's rules for names and types, per profile. */
import type { Profile } from './options.ts';

/**
 * Environment names in the spec profile. Production's published schema also allows `~`, the help
 * of its own CLI does not; the contract profile keeps the narrower reading, so a name it accepts is
 * valid under both (docs/api-behaviour.md#environment-names).
 */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Org names in paths; the contract shows no rule, so the emulator uses the environment-name rule. */
export const ORG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Environment and org names as production's published schema has them: `~` allowed. */
export const KOSLI_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._~-]*$/;

/** The types the contract allows. */
export const SPEC_TYPES: readonly string[] = ['K8S', 'S3', 'logical'];
/** The nine types production knows (docs/api-behaviour.md#environment-types). */
export const KOSLI_TYPES: readonly string[] = [
  ...SPEC_TYPES,
  'ECS',
  'lambda',
  'server',
  'docker',
  'azure-apps',
  'cloud-run',
];

/** The types a profile accepts in a PUT (case-sensitive). */
export function typesFor(profile: Profile): readonly string[] {
  return profile === 'kosli' ? KOSLI_TYPES : SPEC_TYPES;
}

/** The rule for environment names, in bodies and paths, of a profile. */
export function namePatternFor(profile: Profile): RegExp {
  return profile === 'kosli' ? KOSLI_NAME_PATTERN : NAME_PATTERN;
}

/** The rule for org names in paths (and in `orgs`/token options) of a profile. */
export function orgPatternFor(profile: Profile): RegExp {
  return profile === 'kosli' ? KOSLI_NAME_PATTERN : ORG_PATTERN;
}
