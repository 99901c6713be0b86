/** The values of `--output` and `--log-level` (shared by the flags and the config file schema). */
export { OUTPUT_FORMATS, type OutputFormat } from '../core/renderers.ts';
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
