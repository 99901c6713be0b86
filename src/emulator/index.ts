/** The Environments API emulator's public surface. */
export { startEmulator } from './server.ts';
export type { RunningEmulator } from './server.ts';
export type { EmulatorOptions, FaultSettings, Profile, Sleep, TokenGrant } from './options.ts';
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
export { KOSLI_NAME_PATTERN, ORG_PATTERN } from './names.ts';
export type { FaultState } from './admin.ts';
export type { EmulatorStats, RequestLogEntry, TimeoutKind } from './stats.ts';
export type { PolicyDocument, PolicyVersion, StoreDocument, StoredEnvironment } from './store.ts';
