import type { AnyTool } from '../../src/core/define.ts';

/** Meeting bots (being built). */
export const meetingsTools: readonly AnyTool[] = [];
