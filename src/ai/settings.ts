// Per-app AI configuration (ai_configs): what ai_config_get/set show and what the gateway enforces on every call.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { SecretBox } from '../core/crypto.ts';
import { errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';

/** What the gateway needs for a call; the own key is opened only here, never returned. */
export interface AiSettings {
  defaultModel: string | null;
  byokKey: string | null;
  maxTokensPerRequest: number | null;
  allowedModels: readonly string[] | null;
  endUserDailyTokenLimit: number | null;
}

/** The configuration as the API returns it: the own key only as whether it is set and a hint. */
export interface AiConfigView {
  defaultModel: string | null;
  byokKeySet: boolean;
  byokKeyHint: string | null;
  maxTokensPerRequest: number | null;
  allowedModels: string[] | null;
  endUserDailyTokenLimit: number | null;
  updatedAt: string | null;
}

/** A partial update: omitted fields keep their value, null clears one. */
export interface AiConfigPatch {
  defaultModel?: string | null | undefined;
  byokKey?: string | null | undefined;
  maxTokensPerRequest?: number | null | undefined;
  allowedModels?: string[] | null | undefined;
  endUserDailyTokenLimit?: number | null | undefined;
}

/** A stored configuration, or EMPTY for an app that never saved one (hence no app and no update time). */
type ConfigRow = Omit<Selectable<ControlDatabase['ai_configs']>, 'app_id' | 'updated_at'> & { updated_at: Date | null };

const EMPTY: ConfigRow = {
  default_model: null,
  byok_key_sealed: null,
  byok_key_hint: null,
  max_tokens_per_request: null,
  allowed_models: null,
  end_user_daily_token_limit: null,
  updated_at: null,
};

/** Enough of a provider key to tell two apart (as provider dashboards show them), never enough to use. */
export function providerKeyHint(key: string): string {
  return key.length >= 16 ? `${key.slice(0, 5)}…${key.slice(-4)}` : '…';
}

/**
 * How long this process trusts the settings it read: every AI call needs them, and a query per call is a round trip
 * on the hot path. A change made through this process applies at once; one made through another instance within this.
 */
export const SETTINGS_TTL_MS = 5_000;

export class AiSettingsStore {
  readonly #db: Kysely<ControlDatabase>;
  readonly #box: SecretBox;
  readonly #cache = new Map<string, { settings: AiSettings; until: number }>();

  constructor(db: Kysely<ControlDatabase>, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  async settings(appId: string): Promise<AiSettings> {
    const cached = this.#cache.get(appId);
    if (cached && cached.until > Date.now()) return cached.settings;
    const row = await this.#row(appId);
    const settings: AiSettings = {
      defaultModel: row.default_model,
      byokKey: row.byok_key_sealed ? this.#box.open(row.byok_key_sealed) : null,
      maxTokensPerRequest: row.max_tokens_per_request,
      allowedModels: row.allowed_models,
      endUserDailyTokenLimit: row.end_user_daily_token_limit,
    };
    if (this.#cache.size >= 10_000) this.#cache.clear();
    this.#cache.set(appId, { settings, until: Date.now() + SETTINGS_TTL_MS });
    return settings;
  }

  async view(appId: string): Promise<AiConfigView> {
    return aiConfigView(await this.#row(appId));
  }

  /** One upsert: the fields given replace theirs (null clears), the others stay. */
  async update(appId: string, patch: AiConfigPatch): Promise<AiConfigView> {
    this.#cache.delete(appId);
    const has = (k: keyof AiConfigPatch) => patch[k] !== undefined;
    const byok = patch.byokKey;
    const row = await this.#db.transaction().execute(async (tx) => {
      const { rows } = await sql<ConfigRow>`
      insert into ai_configs as c (app_id, default_model, byok_key_sealed, byok_key_hint, max_tokens_per_request, allowed_models, end_user_daily_token_limit)
      values (${appId}, ${patch.defaultModel ?? null}, ${byok ? this.#box.seal(byok) : null}, ${byok ? providerKeyHint(byok) : null},
              ${patch.maxTokensPerRequest ?? null}, ${patch.allowedModels ?? null}, ${patch.endUserDailyTokenLimit ?? null})
      on conflict (app_id) do update set
        default_model = case when ${has('defaultModel')}::boolean then excluded.default_model else c.default_model end,
        byok_key_sealed = case when ${has('byokKey')}::boolean then excluded.byok_key_sealed else c.byok_key_sealed end,
        byok_key_hint = case when ${has('byokKey')}::boolean then excluded.byok_key_hint else c.byok_key_hint end,
        max_tokens_per_request = case when ${has('maxTokensPerRequest')}::boolean then excluded.max_tokens_per_request else c.max_tokens_per_request end,
        allowed_models = case when ${has('allowedModels')}::boolean then excluded.allowed_models else c.allowed_models end,
        end_user_daily_token_limit = case when ${has('endUserDailyTokenLimit')}::boolean then excluded.end_user_daily_token_limit else c.end_user_daily_token_limit end,
        updated_at = now()
      returning *
    `.execute(tx);
      const saved = rows[0]!;
      // Checked on the merged settings, so that neither field can be changed into a contradiction of the other.
      if (saved.default_model && saved.allowed_models && !saved.allowed_models.includes(saved.default_model)) {
        throw errors.validation(`defaultModel '${saved.default_model}' is not in allowedModels; every request naming no model would be refused.`, [
          { path: patch.defaultModel !== undefined ? 'defaultModel' : 'allowedModels', message: 'defaultModel must be one of allowedModels' },
        ]);
      }
      return saved;
    });
    // Again after the write: a call that read the old row meanwhile must not have cached it past the change.
    this.#cache.delete(appId);
    return aiConfigView(row);
  }

  async #row(appId: string): Promise<ConfigRow> {
    const { rows } = await sql<ConfigRow>`select * from ai_configs where app_id = ${appId}`.execute(this.#db);
    return rows[0] ?? EMPTY;
  }
}

function aiConfigView(row: ConfigRow): AiConfigView {
  return {
    defaultModel: row.default_model,
    byokKeySet: row.byok_key_sealed !== null,
    byokKeyHint: row.byok_key_hint,
    maxTokensPerRequest: row.max_tokens_per_request,
    allowedModels: row.allowed_models,
    endUserDailyTokenLimit: row.end_user_daily_token_limit,
    updatedAt: row.updated_at ? row.updated_at.toISOString() : null,
  };
}
