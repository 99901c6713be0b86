import type { DesiredEnvironment, ObservedEnvironment } from '../../src/core/model.ts';

/** Builds a desired environment with sensible defaults. */
export function desired(
  name: string,
  overrides: Partial<DesiredEnvironment> = {},
): DesiredEnvironment {
  return {
    name,
    type: 'K8S',
    description: `${name} environment`,
    include_scaling: false,
    policies: [],
    ...overrides,
  };
}

/** Builds an observed environment as the kosli listing shows it (all fields carried). */
export function observedFull(
  name: string,
  overrides: Partial<ObservedEnvironment> = {},
): ObservedEnvironment {
  return { ...desired(name), ...overrides };
}

/** Builds an observed environment as the spec listing shows it (no include_scaling/policies). */
export function observedSpec(
  name: string,
  overrides: Partial<ObservedEnvironment> = {},
): ObservedEnvironment {
  return { name, type: 'K8S', description: `${name} environment`, ...overrides };
}
