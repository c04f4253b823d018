import { z } from 'zod';

export interface AppRecord {
  id: string;
  account_id: string;
  name: string;
  subdomain: string;
  db_name: string;
  /** Where its database lives; null: the default region (apps made before regions). */
  region: string | null;
  created_at: Date;
  /** Set while the app is paused (free plan, idle): it answers 423 APP_PAUSED until restored. */
  paused_at: Date | null;
}

/** The columns of an AppRecord. */
export const APP_COLUMNS = ['id', 'account_id', 'name', 'subdomain', 'db_name', 'region', 'created_at', 'paused_at'] as const;

export const RegionNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, 'a region name is lowercase letters, digits and dashes')
  .describe("Where the app's database lives (apps_regions); default: the default one");

export const RegionSchema = z.object({ name: z.string(), default: z.boolean() });
export type RegionView = z.infer<typeof RegionSchema>;

export const AppIdSchema = z
  .string()
  .regex(/^[a-z0-9]{16}$/, 'an app_id is 16 lowercase letters and digits, as returned by apps_create')
  .describe('From apps_list');

export const AppNameSchema = z
  .string()
  .trim()
  .min(1, 'name must not be empty')
  .max(100, 'name is at most 100 characters');

export const AppSchema = z.object({
  app_id: z.string(),
  name: z.string(),
  subdomain: z.string(),
  url: z.string().describe('Base URL of the app: its subdomain when subdomain routing is on, otherwise {base_url}'),
  region: z.string(),
  created_at: z.string(),
  paused_at: z.string().nullable().describe('Since when the app is paused for inactivity (calls answer 423 APP_PAUSED; apps_restore); null when serving'),
});
export type AppView = z.infer<typeof AppSchema>;

/** apps_get's record: the app and the version of its database. */
export const AppDetailsSchema = AppSchema.extend({
  migration_version: z
    .number()
    .int()
    .describe("The app database's platform migration version: the latest applied of the platform's app-database migrations"),
});
export type AppDetails = z.infer<typeof AppDetailsSchema>;

/** Something holding an app's data outside its database (stored objects, hosted sites): removed when the app is deleted. */
export interface AppPurger {
  purgeApp(appId: string): Promise<void>;
}
