// How policies combine per role for postgres_changes (as Postgres combines them for a SELECT), and which conditions are
// evaluated in JavaScript: only forms whose meaning is known exactly; anything else is left to SQL.
import { describe, expect, it } from 'vitest';
import { compileQual, reachOf } from '../../src/realtime/visibility.ts';

const ALICE = '11111111-1111-4111-8111-111111111111';
const privileges = { svc_anon: true, svc_user: true, svc_service: true };
const policy = (permissive: 'PERMISSIVE' | 'RESTRICTIVE', roles: string[], qual: string | null, cmd = 'ALL') => ({ permissive, roles, cmd, qual });

describe('compileQual', () => {
  it('knows true and row ownership as pg_policies prints them, and nothing else', () => {
    expect(compileQual('true')?.({}, undefined)).toBe(true);
    const own = compileQual('(user_id = current_user_id())')!;
    expect(own({ user_id: ALICE }, ALICE)).toBe(true);
    expect(own({ user_id: ALICE.toUpperCase() }, ALICE)).toBe(true);
    expect(own({ user_id: ALICE }, undefined)).toBe(false);
    expect(own({ user_id: null }, ALICE)).toBe(false);
    expect(compileQual('("owner" = public.current_user_id())')!({ owner: ALICE }, ALICE)).toBe(true);
    expect(compileQual('(user_id = current_user_id()) OR true')).toBeUndefined();
    expect(compileQual('(team IN ( SELECT svc_groups.f() AS f))')).toBeUndefined();
  });
});

describe('reachOf', () => {
  it('combines permissive policies by OR and restrictive ones by AND, per role', () => {
    const rules = {
      rls: true,
      privileges,
      policies: [
        policy('PERMISSIVE', ['svc_service'], 'true'),
        policy('PERMISSIVE', ['svc_user'], '(user_id = current_user_id())'),
        policy('PERMISSIVE', ['svc_anon', 'svc_user'], 'true', 'SELECT'),
        policy('RESTRICTIVE', ['svc_anon', 'svc_user'], '(EXISTS ( SELECT 1 FROM svc_billing.entitled()))'),
        policy('PERMISSIVE', ['svc_user'], '(false)', 'INSERT'),
      ],
    };
    expect(reachOf(rules, 'svc_service')).toEqual({ kind: 'all' });
    const user = reachOf(rules, 'svc_user');
    expect(user).toEqual({ kind: 'some', qual: '(((user_id = current_user_id())) OR (true)) AND ((EXISTS ( SELECT 1 FROM svc_billing.entitled())))' });
    expect(reachOf({ ...rules, rls: false }, 'svc_anon')).toEqual({ kind: 'all' });
    expect(reachOf({ ...rules, privileges: { ...privileges, svc_anon: false } }, 'svc_anon')).toEqual({ kind: 'none' });
    expect(reachOf({ rls: true, privileges, policies: [] }, 'svc_user')).toEqual({ kind: 'none' });
    // A group access alone is judged from the members table (once for all viewers); with a plan gate beside it, in SQL.
    const group = { members: 'members', column: 'team', key: 'team' };
    const grouped = { rls: true, privileges, group, policies: [policy('PERMISSIVE', ['svc_service'], 'true'), { ...policy('PERMISSIVE', ['svc_user'], '(team IN ( SELECT f()))'), name: 'svc_group_member' }] };
    expect(reachOf(grouped, 'svc_user')).toEqual({ kind: 'some', qual: '(team IN ( SELECT f()))', group });
    expect(reachOf(grouped, 'svc_anon')).toEqual({ kind: 'none' });
    const gated = { ...grouped, policies: [...grouped.policies, { ...policy('RESTRICTIVE', ['svc_anon', 'svc_user'], '(gate())'), name: 'svc_plan_gate' }] };
    expect(reachOf(gated, 'svc_user')).toEqual({ kind: 'some', qual: '(((team IN ( SELECT f())))) AND ((gate()))' });
    const owned = reachOf({ rls: true, privileges, policies: [policy('PERMISSIVE', ['svc_user'], '(user_id = current_user_id())')] }, 'svc_user');
    expect(owned.kind === 'some' && owned.test?.({ user_id: ALICE }, ALICE)).toBe(true);
  });
});
