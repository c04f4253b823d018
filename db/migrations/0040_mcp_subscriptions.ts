import { sql, type Kysely } from 'kysely';

/*
 * Resource subscriptions of MCP 2025-11-25 sessions (src/transports/mcp-resources.ts):
 * - `mcp_sessions.subscriptions`: the resource URIs a session subscribed to (resources/subscribe), in its row because
 *   the subscribe request and the session's notification stream may reach different api processes.
 * - A function's definition changing (deployed, renamed, re-triggered, deleted) announces its app on the channel
 *   `svc_app_changes`, whichever path wrote it, so every api process can tell the subscribers of the app's resources.
 *   Invocation counters are not in the trigger's column list: a call of a function announces nothing.
 * - Long-running work announces the URI of its resource (resources/work.ts) on `svc_resource_changes` when its status
 *   changes: a clone (`svc://clones/{id}`) and a frontend deployment (`svc://apps/{app_id}/deployments/{id}`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table mcp_sessions add column subscriptions text[] not null default '{}';
    create function announce_function_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('svc_app_changes', case when tg_op = 'DELETE' then old.app_id else new.app_id end);
      return null;
    end $$;
    create trigger functions_announce_change
      after insert or delete or update of name, description, trigger_type, trigger_config, version on functions
      for each row execute function announce_function_change();
    create function announce_clone_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('svc_resource_changes', 'svc://clones/' || new.id);
      return null;
    end $$;
    create trigger template_clones_announce_change
      after update of status on template_clones for each row when (old.status is distinct from new.status)
      execute function announce_clone_change();
    create function announce_deployment_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('svc_resource_changes', 'svc://apps/' || new.app_id || '/deployments/' || new.id);
      return null;
    end $$;
    create trigger frontend_deployments_announce_change
      after update of status on frontend_deployments for each row when (old.status is distinct from new.status)
      execute function announce_deployment_change();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger frontend_deployments_announce_change on frontend_deployments;
    drop function announce_deployment_change();
    drop trigger template_clones_announce_change on template_clones;
    drop function announce_clone_change();
    drop trigger functions_announce_change on functions;
    drop function announce_function_change();
    alter table mcp_sessions drop column subscriptions;
  `.execute(db);
}
