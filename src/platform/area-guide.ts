// The shape of one area's hand-written guide, and what several areas' guides share. Each area keeps its guide beside
// its code (src/<area>/guide.ts, or src/<folder>/<area>-guide.ts for an area that lives in another's folder);
// src/platform/area-guides.ts lists them in the order of /llms.txt.

export interface AreaGuide {
  /** One sentence: what the area is for. */
  summary: string;
  /** Markdown placed before the tool reference: formats, limits, errors and rules every tool of the area shares. */
  reference?: string;
}

/** Byte sizes in the guides are written in MB (storage's inline limit, functions' code size). */
export const MB = 1024 * 1024;
