// Rewrites the generated area index of llms.txt from the registry (the areas' sections are rendered at start-up).
import { readFileSync, writeFileSync } from 'node:fs';
import { DEFAULT_TOOLSET_AREAS, toolAreas } from '../tools/index.ts';
import { withAreaIndex } from '../src/platform/docs.ts';
import { LLMS_TXT_PATH } from '../src/composition.ts';

writeFileSync(LLMS_TXT_PATH, withAreaIndex(readFileSync(LLMS_TXT_PATH, 'utf8'), toolAreas, DEFAULT_TOOLSET_AREAS));
console.log('llms.txt updated');
