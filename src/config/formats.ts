/** The values of `--output`, `--log-level` and `--log-format` (shared by the flags and the config file schema). */
export { OUTPUT_FORMATS, type OutputFormat } from '../core/renderers.ts';
export { LOG_FORMATS, type LogFormatSetting } from '../runtime/log-line.ts';
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
