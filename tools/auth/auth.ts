import type { AnyTool } from '../../src/core/define.ts';

/** End-user auth tools. */
export const authTools: readonly AnyTool[] = [];
