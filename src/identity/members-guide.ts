// The members area's hand-written guide (GET /llms.txt?area=members); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const MEMBERS_GUIDE: AreaGuide = {
  summary: "An account's people for its admins: members and roles, invitations, platform keys with a role, the audit log.",
  reference: `
- Roles, highest first: owner, admin, developer, viewer. Viewers read; developers build (apps, schema, functions, data);
  admins also manage members, invitations and platform keys and read the audit log; owners also grant and change the
  owner role and manage billing. Nobody grants or touches a role above their own: 403 FORBIDDEN_ROLE with
  \`required_role\`. The last owner cannot be demoted, removed or leave: 409 LAST_OWNER.
- What a member made follows them, keys made with their keys included (\`created_by\` is that person): demoted, their
  platform keys drop to the new role, their service keys go below developer and their open invitations below admin;
  removed (or leaving), all their keys, invitations, sessions and OAuth grants there end. Keys no person is behind (the
  operator's, \`created_by\` null) last until revoked.
- invitations_create returns \`token\` and \`url\` once (stored hashed). With \`email\` only that address may accept;
  without, anyone holding the link. A person accepts signed in (POST /dashboard/invitations/accept { token }) or signs
  up with it (invitation_token); a member already is 409 ALREADY_MEMBER. Invitations last 1-30 days (default 7).
- platform_keys_create: \`role\` up to yours (default yours); \`created_by\` names the person behind it.
- audit_list entries: { id, actor_kind (person, key, platform), actor_id, action, resource_type, resource_id, ip,
  details, created_at }, newest first; pass next_cursor as cursor for older ones. Actions: app.create, app.delete,
  app.restore, schema.apply, function.deploy, function.delete, key.create, key.revoke (resource_type \`<kind>_key\`,
  the kind platform, service or substrate), member.add, member.role_change, member.remove, invitation.create, invitation.revoke,
  invitation.accept, substrate.approve, substrate.reject. Entries are kept SVC_AUDIT_RETENTION_DAYS (default 365).
`,
};
