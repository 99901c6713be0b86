import manifest from '../../package.json' with { type: 'json' };

/** The package version, from package.json (the bundler inlines it into the package's code). */
export const VERSION: string = manifest.version;
