import type { AnyTool } from '../../src/core/define.ts';

/** People search (being built). */
export const peopleTools: readonly AnyTool[] = [];
