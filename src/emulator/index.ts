/** The Environments API emulator's public surface. */
export { startEmulator } from './server.ts';
export type { RunningEmulator } from './server.ts';
export type { EmulatorOptions, FaultSettings, Profile, TokenGrant } from './options.ts';
export { DEFAULT_HOST, DEFAULT_PORT, MAX_BODY_BYTES, PROFILES } from './options.ts';
export type { FaultState } from './admin.ts';
export type { EmulatorStats, RequestLogEntry } from './stats.ts';
export type { StoreDocument, StoredEnvironment } from './store.ts';
