/** The values of `--output` and `--log-level` (shared by the flags and the config file schema). */
export const OUTPUT_FORMATS = ['text', 'json', 'markdown'] as const;
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
