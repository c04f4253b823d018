// The platform area's hand-written guide (GET /llms.txt?area=platform); src/platform/area-guides.ts lists it.
import type { AreaGuide } from './area-guide.ts';

export const PLATFORM_GUIDE: AreaGuide = {
  summary: 'The platform itself: this guide and its sections, MCP toolsets, health checks, suggestions to its maintainers.',
};
