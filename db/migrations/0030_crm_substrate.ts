import { sql, type Kysely } from 'kysely';

/**
 * What the CRM template needed of the substrate (issue 29), each a gap it found:
 * - apps.substrate_end_users_decide: the owner's consent, given when linking, that the app's signed-in end users may
 *   approve or reject what the app itself proposed (a CRM's sales manager approving a deal move). Off by default.
 * - substrate_actions.decided_via 'app_end_user', with the deciding end user's id in decided_by_end_user (end users are
 *   the app's, not persons of the account, so decided_by stays null).
 * - substrate_entities.type 'deal': an opportunity a CRM tracks, whose stage changes a person approves.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table apps add column substrate_end_users_decide boolean not null default false;
    alter table substrate_actions drop constraint substrate_actions_decided_via_check;
    alter table substrate_actions add constraint substrate_actions_decided_via_check
      check (decided_via in ('rest', 'mcp_elicitation', 'app_end_user'));
    alter table substrate_actions add column decided_by_end_user uuid;
    alter table substrate_entities drop constraint substrate_entities_type_check;
    alter table substrate_entities add constraint substrate_entities_type_check
      check (type in ('person', 'company', 'fund', 'workspace', 'team', 'project', 'event', 'agent', 'self', 'deal'));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    delete from substrate_entities where type = 'deal';
    alter table substrate_entities drop constraint substrate_entities_type_check;
    alter table substrate_entities add constraint substrate_entities_type_check
      check (type in ('person', 'company', 'fund', 'workspace', 'team', 'project', 'event', 'agent', 'self'));
    alter table substrate_actions drop column decided_by_end_user;
    update substrate_actions set decided_via = 'rest' where decided_via = 'app_end_user';
    alter table substrate_actions drop constraint substrate_actions_decided_via_check;
    alter table substrate_actions add constraint substrate_actions_decided_via_check check (decided_via in ('rest', 'mcp_elicitation'));
    alter table apps drop column substrate_end_users_decide;
  `.execute(db);
}
