/** The Environments API emulator's public surface. */
export { startEmulator } from './server.ts';
export type { RunningEmulator } from './server.ts';
export type { EmulatorOptions, FaultSettings, Profile, TokenGrant } from './options.ts';
export {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MAX_BODY_BYTES,
  MAX_TIMEOUT_MS,
  PROFILES,
} from './options.ts';
export type { FaultState } from './admin.ts';
export type { EmulatorStats, RequestLogEntry } from './stats.ts';
export type { StoreDocument, StoredEnvironment } from './store.ts';
export { ORG_PATTERN } from './validate.ts';
