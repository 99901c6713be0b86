/** The Environments API emulator's public surface. */
export { startEmulator, type RunningEmulator } from './server.ts';
export * from './options.ts';
export { NAME_PATTERN } from './validation.ts';
export type { FaultSettings, IgnorableWrite } from './faults.ts';
export type { FaultState } from './admin.ts';
export type { EmulatorStats, RequestLogEntry } from './stats.ts';
export type { PolicyDocument, StoreDocument, StoredEnvironment } from './store-document.ts';
