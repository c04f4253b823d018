import { sql, type Kysely } from 'kysely';

/**
 * A deleted app's meeting bots still in a call leave it (src/meetings/bots.ts, leaveOrphan): its rows go with the app
 * (cascade), so the app's delete itself enqueues, in its own transaction, one meetings_leave_orphan job per bot that
 * has not finished (an `ended` one too: its charge would have come with `done`), carrying what the job needs to make
 * the bot leave and to charge the time it ran.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function meetings_leave_on_app_delete() returns trigger language plpgsql as $$
    begin
      -- Only when there is a bot to handle, so deleting apps never depends on anything else.
      if exists (select 1 from meeting_bots b where b.app_id = old.id and b.status not in ('done', 'fatal')) then
        perform graphile_worker.add_job('meetings_leave_orphan',
          json_build_object('bot_id', b.id, 'provider_bot_id', b.provider_bot_id, 'account_id', old.account_id,
            'reservation_id', b.reservation_id, 'transcript', b.transcript, 'status', b.status,
            'started_at', b.started_at, 'completed_at', b.completed_at),
          job_key => 'leave:' || b.id::text, max_attempts => 25)
        from meeting_bots b
        where b.app_id = old.id and b.status not in ('done', 'fatal');
      end if;
      return old;
    end $$;
    create trigger meetings_leave_on_app_delete before delete on apps
      for each row execute function meetings_leave_on_app_delete();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger meetings_leave_on_app_delete on apps; drop function meetings_leave_on_app_delete();`.execute(db);
}
