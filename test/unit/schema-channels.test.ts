import { describe, expect, it } from 'vitest';
import { matchChannel, normalizeChannels } from '../../src/schema/channels.ts';
import type { ChannelRule } from '../../src/schema/definition.ts';

// The schema definition's `channels`: patterns checked and ordered, and the rule a private channel's name falls under.

const RULES: ChannelRule[] = normalizeChannels({
  '*': 'service',
  'room:*': { members: 'room_members', key: 'room_id' },
  'room:lobby': 'authenticated',
  'room:vip:*': 'service',
  'user:*': 'user',
})!;

describe('normalizeChannels', () => {
  it('orders rules by pattern and spells a group out with its write default', () => {
    expect(RULES.map((r) => r.pattern)).toEqual(['*', 'room:*', 'room:lobby', 'room:vip:*', 'user:*']);
    expect(RULES[1]!.access).toEqual({ members: 'room_members', key: 'room_id', write: 'members' });
    expect(normalizeChannels(undefined)).toBeUndefined();
    expect(normalizeChannels({})).toEqual([]);
  });

  it.each([
    [{ '': 'service' }, "channels['']: a pattern is 1-246 bytes."],
    [{ ['x'.repeat(247)]: 'service' }, `channels['${'x'.repeat(60)}']: a pattern is 1-246 bytes.`],
    [{ 'a\nb': 'service' }, "channels['a\nb']: a pattern has no control characters."],
    [{ '*:x': 'service' }, "channels['*:x']: '*' may only end a pattern ('room:*' covers every topic starting 'room:')."],
    [{ 'room:1': { members: 'm', key: 'k' } }, "channels['room:1']: a group access needs a pattern ending in '*', where the group's key goes ('room:1*')."],
    [{ 'room:*': { members: 'Members', key: 'k' } }, "channels['room:*'].members: 'Members' is not a valid name; use 1-63 lowercase letters, digits and underscores, starting with a letter or underscore."],
  ] as const)('refuses %j', (input, message) => {
    expect(() => normalizeChannels(input as Parameters<typeof normalizeChannels>[0])).toThrow(message);
  });

  it('refuses more than 50 patterns', () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`c${i}`, 'service' as const]));
    expect(() => normalizeChannels(many)).toThrow('channels lists 51 patterns; at most 50 are allowed.');
  });
});

describe('matchChannel', () => {
  it.each([
    ['room:lobby', 'room:lobby', ''],
    ['room:r1', 'room:*', 'r1'],
    ['room:vip:7', 'room:vip:*', '7'],
    ['room:', 'room:*', ''],
    ['user:abc', 'user:*', 'abc'],
    ['elsewhere', '*', 'elsewhere'],
  ])('%s falls under %s (the * is %j)', (name, pattern, rest) => {
    const match = matchChannel(RULES, name);
    expect([match?.rule.pattern, match?.rest]).toEqual([pattern, rest]);
  });

  it('finds nothing without a covering pattern', () => {
    expect(matchChannel(RULES.slice(1), 'elsewhere')).toBeUndefined();
    expect(matchChannel([], 'room:1')).toBeUndefined();
  });
});
