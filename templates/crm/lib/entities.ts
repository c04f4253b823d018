// Contacts, companies and deals mirrored into the app owner's substrate as entities (person, company, deal), so the
// owner's agents see the CRM's world and a deal's stage change is a substrate action a person approves. The mirror is
// written through upsert_entity (auto policy) and its entity id kept on the row (entity_id).
//
// Every workspace's rows go into the one substrate of the owner: canonical_keys carry the row's id (crm_<table>_id) so
// a later upsert finds the same entity, and attrs carry the workspace. The idempotency key holds a hash of the payload:
// an unchanged row replays its first upsert (nothing runs), a changed one is upserted again.
import type { Ctx, Substrate } from './ctx.ts';
import { sha256Hex } from './hash.ts';
import { HttpError, eq, rows } from './http.ts';
import type { Deal, Stage } from './deals.ts';

export type MirroredTable = 'contacts' | 'companies' | 'deals';

/** The canonical key holding the row's id, by table. */
const ROW_KEY: Record<MirroredTable, string> = { contacts: 'crm_contact_id', companies: 'crm_company_id', deals: 'crm_deal_id' };

interface EntityPayload {
  type: 'person' | 'company' | 'deal';
  display_name: string;
  id?: string;
  primary_email?: string;
  canonical_keys: Record<string, string>;
  attrs: Record<string, unknown>;
}

/** A mirrored row (read with select *): a contact, company or deal. */
export interface MirroredRow {
  id: string;
  workspace_id: string;
  entity_id: string | null;
}

type Row = MirroredRow & Record<string, unknown>;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const present = (fields: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null && v !== undefined && v !== ''));

/** The deal's attrs as the substrate keeps them; a stage change replaces attrs wholesale, so it sends all of them. */
export function dealAttrs(deal: Deal, stage: Pick<Stage, 'id' | 'name'>, changes: Partial<Pick<Deal, 'next_step' | 'forecast'>> = {}): Record<string, unknown> {
  return present({
    workspace_id: deal.workspace_id,
    title: deal.title,
    amount: Number(deal.amount),
    currency: deal.currency,
    close_date: deal.close_date,
    forecast: changes.forecast ?? deal.forecast,
    next_step: changes.next_step ?? deal.next_step,
    company_id: deal.company_id,
    contact_id: deal.contact_id,
    stage: stage.name,
    stage_id: stage.id,
  });
}

function payloadOf(table: MirroredTable, row: Row, stage?: Pick<Stage, 'id' | 'name'>): EntityPayload {
  const base = { ...(row.entity_id ? { id: row.entity_id } : {}), canonical_keys: { [ROW_KEY[table]]: row.id } };
  if (table === 'deals') return { ...base, type: 'deal', display_name: String(row.title), attrs: dealAttrs(row as unknown as Deal, stage!) };
  if (table === 'companies') {
    return { ...base, type: 'company', display_name: String(row.name), attrs: present({ workspace_id: row.workspace_id, domain: row.domain, industry: row.industry, size: row.size, location: row.location, linkedin_url: row.linkedin_url }) };
  }
  const email = typeof row.email === 'string' && EMAIL.test(row.email) ? row.email : undefined;
  return {
    ...base,
    type: 'person',
    display_name: String(row.full_name),
    ...(email ? { primary_email: email } : {}),
    attrs: present({ workspace_id: row.workspace_id, title: row.title, company_id: row.company_id, phone: row.phone, location: row.location, linkedin_url: row.linkedin_url }),
  };
}

/** ctx.substrate, or 409: the app must be linked to its owner's substrate (template.json substrate_link). */
export function substrateOf(ctx: Ctx): Substrate {
  if (!ctx.substrate) throw new HttpError(409, 'not_linked', "The app is not linked to its owner's substrate (substrate_app_link), which keeps proposals and entities.");
  return ctx.substrate;
}

/**
 * Upserts the row's entity and keeps its id on the row; the entity id. A deal needs its stage (attrs name it).
 */
export async function mirror(ctx: Ctx, table: MirroredTable, row: MirroredRow, stage?: Pick<Stage, 'id' | 'name'>): Promise<string> {
  const payload = payloadOf(table, row as Row, stage);
  const key = `crm-entity:${table}:${row.id}:${(await sha256Hex(JSON.stringify(payload))).slice(0, 24)}`;
  const proposed = await substrateOf(ctx).propose('upsert_entity', payload as unknown as Record<string, unknown>, { idempotency_key: key });
  const entityId = proposed.result?.entity_id;
  if (typeof entityId !== 'string') throw new HttpError(502, 'entity_not_written', `upsert_entity was ${proposed.verdict?.result ?? 'not executed'}: ${proposed.verdict?.reason ?? 'no entity id'}.`);
  if (entityId !== row.entity_id) rows(await ctx.asApp.data.from(table).update({ entity_id: entityId }, `id=${eq(row.id)}`), table);
  return entityId;
}

/** The deal's entity id, mirroring the deal first when it has none yet. */
export async function dealEntity(ctx: Ctx, deal: Deal, stage: Pick<Stage, 'id' | 'name'>): Promise<string> {
  return deal.entity_id ?? mirror(ctx, 'deals', deal, stage);
}
