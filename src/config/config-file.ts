import * as z from 'zod';
import { LOG_LEVELS, OUTPUT_FORMATS } from './formats.ts';

const duration = z.union([z.string(), z.literal(0)]);

/** The config file (`--config FILE`, YAML). Every key is optional; see config/envsync.example.yaml. */
export const configFileSchema = z.strictObject({
  manifests: z.string().optional(),
  apiUrl: z.string().optional(),
  orgs: z.array(z.string()).optional(),
  concurrency: z.number().int().min(1).max(256).optional(),
  retries: z.number().int().min(0).max(20).optional(),
  timeout: duration.optional(),
  retryDelay: duration.optional(),
  state: z.string().optional(),
  output: z.enum(OUTPUT_FORMATS).optional(),
  detailedExitcode: z.boolean().optional(),
  logLevel: z.enum(LOG_LEVELS).optional(),
  tokenFile: z.string().optional(),
  insecureHttp: z.boolean().optional(),
  caFile: z.string().optional(),
  maxFileBytes: z.number().int().min(1).optional(),
  // envsync run only:
  interval: duration.optional(),
  debounce: duration.optional(),
  listen: z.string().optional(),
  shutdownTimeout: duration.optional(),
  shardIndex: z.number().int().min(0).optional(),
  shardCount: z.number().int().min(1).optional(),
  shardFromHostname: z.boolean().optional(),
});

export type ConfigFile = z.infer<typeof configFileSchema>;
