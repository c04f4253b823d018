// The tools layer's view of core's descriptors: each area's tools state the services they use, and their handlers
// see exactly those (typed), with the app record of app-scoped tools. Core itself knows no area.
import type { z } from 'zod';
import { defineTool, type AnyTool, type ToolContext, type ToolDescriptor } from '../src/core/define.ts';
import type { AppRecord } from '../src/apps/types.ts';
import type { Services } from '../src/services.ts';

export type ServiceName = keyof Services;

/** A handler's context when it uses the services named K. */
export type Ctx<K extends ServiceName = ServiceName> = ToolContext<Pick<Services, K>, AppRecord>;

/** defineTool for tools that use only the services named: `const defineTool = toolsUsing<'rag' | 'storage'>();`. */
export function toolsUsing<K extends ServiceName>() {
  return <I extends z.ZodType, O extends z.ZodType>(tool: ToolDescriptor<I, O, Pick<Services, K>, AppRecord>): AnyTool => defineTool(tool);
}
