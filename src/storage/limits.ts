// Per-file and per-app limits: the platform defaults, an app's tightening overrides, and the quota checks an
// upload reservation passes.
import { sql, type Kysely } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';
import type { StorageContext } from './context.ts';
import { storageErrors } from './errors.ts';
import { allowEntryWithin, contentTypeAllowed } from './names.ts';
import type { Owner } from './objects.ts';
import type { PendingReservations } from './types.ts';

export interface LimitsOverrides {
  max_file_bytes: number | null;
  max_app_bytes: number | null;
  allowed_content_types: string[] | null;
}

export interface StorageLimits {
  app_id: string;
  /** Effective values: the override, or the platform default. */
  max_file_bytes: number;
  max_app_bytes: number;
  /** Effective allow-list; empty allows every type. */
  allowed_content_types: string[];
  /** What one end user may hold reserved in pending uploads at once. */
  max_user_pending_uploads: number;
  max_user_pending_bytes: number;
  overrides: LimitsOverrides;
  usage: StorageUsage;
}

export interface StorageUsage {
  used_bytes: number;
  pending_bytes: number;
}

/** Fields of storage_limits_set: omitted leaves a value as is, null resets it to the platform default. */
export type LimitsPatch = Partial<LimitsOverrides>;

/** The limits in force for one app. */
export interface EffectiveLimits {
  overrides: LimitsOverrides;
  maxFile: number;
  maxApp: number;
  /** Every list must allow a type: the platform's (when set) and the app's (when set). */
  allowLists: (readonly string[])[];
  userPending: PendingReservations;
}

export type LimitsDeps = Pick<StorageContext, 'db' | 'config'>;

export class Limits {
  readonly #deps: LimitsDeps;

  constructor(deps: LimitsDeps) {
    this.#deps = deps;
  }

  async limits(appId: string): Promise<StorageLimits> {
    const limits = await this.#effective(appId);
    return {
      app_id: appId,
      max_file_bytes: limits.maxFile,
      max_app_bytes: limits.maxApp,
      allowed_content_types: limits.overrides.allowed_content_types ?? [...this.#deps.config.storage.allowedContentTypes],
      max_user_pending_uploads: limits.userPending.uploads,
      max_user_pending_bytes: limits.userPending.bytes,
      overrides: limits.overrides,
      usage: await this.#usage(this.#deps.db, appId),
    };
  }

  /**
   * Per-app overrides can only tighten the platform limits: a byte limit above the platform's, or an allow-list
   * admitting a type the platform's does not, is refused (400) before anything is written.
   */
  async setLimits(appId: string, patch: LimitsPatch): Promise<StorageLimits> {
    const { storage } = this.#deps.config;
    if (patch.max_file_bytes != null && patch.max_file_bytes > storage.maxFileBytes) {
      throw storageErrors.limitAboveDefault('max_file_bytes', storage.maxFileBytes);
    }
    if (patch.max_app_bytes != null && patch.max_app_bytes > storage.maxAppBytes) {
      throw storageErrors.limitAboveDefault('max_app_bytes', storage.maxAppBytes);
    }
    const has = (k: keyof LimitsOverrides) => patch[k] !== undefined;
    const types = patch.allowed_content_types == null ? null : [...new Set(patch.allowed_content_types.map((t) => t.trim().toLowerCase()))];
    const outside = types?.filter((t) => !allowEntryWithin(t, storage.allowedContentTypes)) ?? [];
    if (outside.length) throw storageErrors.typesOutsidePlatform(outside, storage.allowedContentTypes);
    await sql`
      insert into storage_limits (app_id, max_file_bytes, max_app_bytes, allowed_content_types)
      values (${appId}, ${patch.max_file_bytes ?? null}, ${patch.max_app_bytes ?? null}, ${types}::text[])
      on conflict (app_id) do update set
        max_file_bytes = case when ${has('max_file_bytes')} then excluded.max_file_bytes else storage_limits.max_file_bytes end,
        max_app_bytes = case when ${has('max_app_bytes')} then excluded.max_app_bytes else storage_limits.max_app_bytes end,
        allowed_content_types = case when ${has('allowed_content_types')} then excluded.allowed_content_types else storage_limits.allowed_content_types end,
        updated_at = now()
    `.execute(this.#deps.db);
    return this.limits(appId);
  }

  /** The limits in force for one app (a bucket's own limits may only tighten them). */
  effective(appId: string): Promise<EffectiveLimits> {
    return this.#effective(appId);
  }

  /** The per-file checks of an upload (size, content type), before anything is reserved; returns the limits in force. */
  async admitFile(appId: string, owner: Owner, sizeBytes: number, contentType: string): Promise<EffectiveLimits> {
    const limits = await this.#effective(appId);
    const maxFile = this.fileCap(limits, owner);
    if (sizeBytes > maxFile) throw storageErrors.fileTooLarge(sizeBytes, maxFile);
    for (const list of limits.allowLists) {
      if (!contentTypeAllowed(contentType, list)) throw storageErrors.contentTypeNotAllowed(contentType, list);
    }
    return limits;
  }

  /** The largest file the owner may store: a file above an end user's pending cap could never be reserved. */
  fileCap(limits: EffectiveLimits, owner: Owner): number {
    return owner.kind === 'user' ? Math.min(limits.maxFile, limits.userPending.bytes) : limits.maxFile;
  }

  /**
   * The quota checks of a reservation: an end user's pending-upload cap, then the app's quota (ready bytes plus
   * unexpired pending uploads). Call under the app's storage lock, so that parallel requests cannot overshoot.
   */
  async admitReservation(tx: Kysely<ControlDatabase>, appId: string, owner: Owner, size: number, limits: EffectiveLimits): Promise<void> {
    if (owner.kind === 'user') await this.#checkUserPending(tx, appId, owner.userId, size, limits.userPending);
    const usage = await this.#usage(tx, appId);
    if (usage.used_bytes + usage.pending_bytes + size > limits.maxApp) {
      throw storageErrors.quotaExceeded(size, usage.used_bytes, usage.pending_bytes, limits.maxApp);
    }
  }

  /** Refuses (429) an end user's upload beyond their pending-upload cap; call under the app's storage lock. */
  async #checkUserPending(tx: Kysely<ControlDatabase>, appId: string, userId: string, size: number, max: PendingReservations): Promise<void> {
    const { rows } = await sql<{ uploads: number; bytes: string; retry_after: number | null }>`
      select count(*)::int as uploads, coalesce(sum(size_bytes), 0)::text as bytes,
             ceil(extract(epoch from min(expires_at) - now()))::int as retry_after
      from storage_objects
      where app_id = ${appId} and user_id = ${userId}::uuid and status = 'pending' and expires_at > now()
    `.execute(tx);
    const pending = { uploads: rows[0]?.uploads ?? 0, bytes: Number(rows[0]?.bytes ?? 0) };
    if (pending.uploads >= max.uploads || pending.bytes + size > max.bytes) {
      // Refusal implies a pending upload (size alone fits, see admitFile): the first expiry is the earliest relief.
      throw storageErrors.pendingLimitExceeded(size, pending, max, Math.max(1, rows[0]?.retry_after ?? 1));
    }
  }

  async #usage(db: Kysely<ControlDatabase>, appId: string): Promise<StorageUsage> {
    const { rows } = await sql<{ used: string; pending: string }>`
      select coalesce(sum(size_bytes) filter (where status = 'ready'), 0)::text as used,
             coalesce(sum(size_bytes) filter (where status = 'pending' and expires_at > now()), 0)::text as pending
      from storage_objects where app_id = ${appId}
    `.execute(db);
    return { used_bytes: Number(rows[0]?.used ?? 0), pending_bytes: Number(rows[0]?.pending ?? 0) };
  }

  async #overrides(appId: string): Promise<LimitsOverrides> {
    const { rows } = await sql<{ max_file_bytes: string | null; max_app_bytes: string | null; allowed_content_types: string[] | null }>`
      select max_file_bytes::text, max_app_bytes::text, allowed_content_types from storage_limits where app_id = ${appId}
    `.execute(this.#deps.db);
    const row = rows[0];
    return {
      max_file_bytes: row?.max_file_bytes == null ? null : Number(row.max_file_bytes),
      max_app_bytes: row?.max_app_bytes == null ? null : Number(row.max_app_bytes),
      allowed_content_types: row?.allowed_content_types ?? null,
    };
  }

  /**
   * Limits in force: an override, never above the platform limit (one stored before the operator lowered that
   * limit does not loosen it), or the platform default. The platform allow-list and the app's must both allow a type.
   */
  async #effective(appId: string): Promise<EffectiveLimits> {
    const overrides = await this.#overrides(appId);
    const { storage } = this.#deps.config;
    const allowLists: (readonly string[])[] = [];
    if (storage.allowedContentTypes.length) allowLists.push(storage.allowedContentTypes);
    if (overrides.allowed_content_types) allowLists.push(overrides.allowed_content_types);
    const maxApp = Math.min(overrides.max_app_bytes ?? storage.maxAppBytes, storage.maxAppBytes);
    return {
      overrides,
      maxFile: Math.min(overrides.max_file_bytes ?? storage.maxFileBytes, storage.maxFileBytes),
      maxApp,
      allowLists,
      userPending: { uploads: storage.userPendingUploads, bytes: Math.ceil((maxApp * storage.userPendingPercent) / 100) },
    };
  }
}
