// Templates and clones: the shapes the tools answer with, and what a clone pins of its template (source.ts builds it).
import { z } from 'zod';

/** The steps of a clone in the order they run; a clone's status is the step running, or queued, ready, failed. */
export const CLONE_STEPS = ['database', 'schema', 'functions', 'site', 'ai_rag', 'integrations', 'billing', 'seed'] as const;
export type CloneStep = (typeof CLONE_STEPS)[number];
export const CLONE_STATUSES = ['queued', ...CLONE_STEPS, 'ready', 'failed'] as const;
export type CloneStatus = (typeof CLONE_STATUSES)[number];

/** How a clone treats one variable of a template's function: its value copied, left for the new owner, or made anew. */
export const ENV_TREATMENTS = ['copy', 'secret', 'generate'] as const;
export type EnvTreatment = (typeof ENV_TREATMENTS)[number];

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const TABLE = /^[a-z_][a-z0-9_]{0,62}$/;

/** Paid platform services a template's functions may call, which its manifest names. */
export const USES = ['people', 'meetings'] as const;

/** What the publisher says about what is not copied as is (templates.options). */
export const TemplateOptionsSchema = z
  .object({
    env: z
      .record(z.string().regex(NAME, 'a variable name'), z.enum(ENV_TREATMENTS))
      .optional()
      .describe(
        "Variable name: 'copy' (value copied), 'secret' (the new owner sets it; the default) or 'generate' (random per clone, for internal secrets)",
      ),
    seed_tables: z
      .array(z.string().regex(TABLE, 'a table name'))
      .max(50)
      .optional()
      .describe(
        "Tables whose rows clones copy, in this order (parents first): pinned when you publish (publish again to update), without end users' rows (user_id or a group's column set) and without user_id",
      ),
    seed_end_user_rows: z
      .array(z.string().regex(TABLE, 'a table name'))
      .max(50)
      .optional()
      .describe("Seed tables whose end users' rows are pinned too (their user_id left out)"),
    rag_documents: z.array(z.string().min(1).max(100)).max(50).optional().describe('RAG collections whose text documents a clone re-ingests (embedded with the new app\'s credits)'),
    substrate_link: z.boolean().optional().describe("Link the clone to the new owner's substrate (functions' ctx.substrate)"),
    uses: z.array(z.enum(USES)).max(USES.length).optional().describe('Paid services its functions call'),
    setup: z
      .array(z.object({ message: z.string().min(1).max(500), tool: z.string().min(1).max(100) }).strict())
      .max(20)
      .optional()
      .describe('Steps for the new owner'),
  })
  .strict();
export type TemplateOptions = z.infer<typeof TemplateOptionsSchema>;

/** One thing the new owner must do before the cloned app works fully. */
export const TodoItemSchema = z.object({
  kind: z.enum(['secret', 'frontend_env', 'connect_onboarding', 'integration', 'setup']),
  message: z.string(),
  tool: z.string().describe('The tool that does it'),
  function: z.string().optional(),
  name: z.string().optional(),
});
export type TodoItem = z.infer<typeof TodoItemSchema>;

export const ManifestSchema = z.object({
  app_id: z.string(),
  title: z.string(),
  description: z.string(),
  visibility: z.enum(['account', 'public']),
  version: z.string().describe('Changes whenever what a clone copies changes'),
  shipped: z.boolean().describe('Shipped with the platform (templates/ in its repository)'),
  published_at: z.string(),
  creates: z.object({
    tables: z.array(z.object({ name: z.string(), access: z.string(), seed_rows: z.number().int().nullable() })),
    migrations: z.number().int(),
    functions: z.array(z.object({ name: z.string(), trigger: z.string(), schedule: z.string().optional(), event: z.string().optional() })),
    site: z.object({ framework: z.string(), files: z.number().int() }).nullable(),
    frontend_env_keys: z.array(z.string()),
    ai: z.object({ default_model: z.string().nullable() }).nullable(),
    rag_collections: z.array(z.object({ name: z.string(), documents: z.number().int() })),
    integrations: z.array(z.string()),
    billing: z.object({ plans: z.array(z.string()), products: z.array(z.string()) }),
    substrate_link: z.boolean(),
    uses: z.array(z.enum(USES)).describe("Paid services its functions call (people search, meeting bots), billed to the owner's credits"),
  }),
  owner_must_supply: z.array(TodoItemSchema),
});
export type Manifest = z.infer<typeof ManifestSchema>;

export const TemplateSummarySchema = ManifestSchema.pick({ app_id: true, title: true, description: true, visibility: true, version: true, shipped: true, published_at: true });
export type TemplateSummary = z.infer<typeof TemplateSummarySchema>;

export const CloneSchema = z.object({
  clone_id: z.string(),
  app_id: z.string().describe('The new app (usable once status is ready)'),
  name: z.string(),
  region: z.string(),
  template: z.object({ app_id: z.string(), version: z.string() }),
  status: z.enum(CLONE_STATUSES),
  failed_step: z.enum(CLONE_STEPS).nullable(),
  error: z.string().nullable(),
  todo: z.array(TodoItemSchema).describe('What the owner must still do; final once status is ready'),
  poll_url: z.string(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export type CloneView = z.infer<typeof CloneSchema>;

/** A function as a clone copies it: code, trigger, limits; variables by treatment, values still sealed. */
export interface SourceFunction {
  name: string;
  description: string;
  code: string;
  timeout_ms: number;
  memory_limit_mb: number;
  trigger: { type: string; config: Record<string, unknown> };
  /** The template's sealed variables (SecretBox): only the names treated 'copy' are opened, by the functions step. */
  env_sealed: string | null;
  env: Record<string, EnvTreatment>;
}

export interface SourcePlan {
  name: string;
  price_cents: number;
  currency: string;
  interval: string;
  features: string[];
}

export interface SourceProduct {
  name: string;
  description: string | null;
  price_cents: number;
  currency: string;
  metadata: Record<string, string>;
}

export interface SourceCollection {
  name: string;
  description: string | null;
  access_mode: string;
  chunk_size: number;
  chunk_overlap: number;
  embedding_model: string;
  copy_documents: boolean;
  /** Text documents a clone re-ingests (when copy_documents). */
  documents: number;
}

/**
 * The template as it was when a clone was asked for: what the clone copies, pinned (template_clones.source). Bulky or
 * sensitive content stays where it is and is read by the step that copies it (the migrations' statements, the site's
 * files, documents' texts, the seed rows pinned at publish); variable values stay sealed.
 */
export interface TemplateSource {
  template_app_id: string;
  version: string;
  /** The template's schema history up to this id (svc_meta.migrations). */
  migrations_through: number;
  migrations: number;
  tables: Array<{ name: string; access: string }>;
  functions: SourceFunction[];
  site: { deployment_id: string; framework: string; files: number } | null;
  frontend_env_keys: string[];
  ai: { default_model: string | null; max_tokens_per_request: number | null; allowed_models: string[] | null; end_user_daily_token_limit: number | null } | null;
  rag: SourceCollection[];
  integrations: Array<{ toolkit: string; display_name: string; scopes: string[] | null }>;
  plans: SourcePlan[];
  products: SourceProduct[];
  /** The tables of the seed rows pinned at publish (seed.ts), in copy order, with their row counts. */
  seed_tables: Array<{ name: string; rows: number }>;
  /** The pinned seed rows a clone copies (template_seed_snapshots); null: none. Absent in sources pinned before snapshots. */
  seed_snapshot_id?: string | null;
  substrate_link: boolean;
  uses: Array<(typeof USES)[number]>;
  setup: Array<{ message: string; tool: string }>;
}
