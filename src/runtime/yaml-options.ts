/** How envsync reads YAML, manifests and the config file alike. */
import type { DocumentOptions, LineCounter, ParseOptions, ScalarTag, SchemaOptions } from 'yaml';

type Options = ParseOptions & DocumentOptions & SchemaOptions;
const bool = { test: /^(?:true|false)$/, resolve: (text: string) => text === 'true' };

/** The YAML 1.2 core schema whatever a `%YAML` directive says, booleans `true` and `false` only. */
export const parseOptions = (lineCounter: LineCounter): Options => ({
  lineCounter,
  prettyErrors: false,
  schema: 'core',
  customTags: (tags) =>
    tags.map((tag) =>
      typeof tag === 'object' && tag.tag === 'tag:yaml.org,2002:bool'
        ? ({ ...tag, ...bool } as ScalarTag)
        : tag,
    ),
});
