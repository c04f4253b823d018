// Rewrites what is generated from the registry: the area index of llms.txt (the areas' sections are rendered at
// start-up) and the manual's reference, docs/reference/ (one page per area, the same text as its section).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { toolAreas } from '../tools/index.ts';
import { REFERENCE_DIR, renderReference, withAreaIndex } from '../src/platform/docs.ts';
import { LLMS_TXT_PATH } from '../src/composition.ts';

writeFileSync(LLMS_TXT_PATH, withAreaIndex(readFileSync(LLMS_TXT_PATH, 'utf8'), toolAreas));
mkdirSync(REFERENCE_DIR, { recursive: true });
const pages = renderReference(toolAreas);
// A page of an area that no longer exists goes.
for (const file of readdirSync(REFERENCE_DIR)) if (!pages.has(file)) rmSync(new URL(file, REFERENCE_DIR));
for (const [file, text] of pages) writeFileSync(new URL(file, REFERENCE_DIR), text);
console.log(`llms.txt and docs/reference/ (${pages.size} pages) updated`);
