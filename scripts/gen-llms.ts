// Rewrites the generated tool section of llms.txt from the registry.
import { readFileSync, writeFileSync } from 'node:fs';
import { tools } from '../tools/index.ts';
import { withToolSection } from '../src/platform/docs.ts';
import { LLMS_TXT_PATH } from '../src/platform.ts';

writeFileSync(LLMS_TXT_PATH, withToolSection(readFileSync(LLMS_TXT_PATH, 'utf8'), tools));
console.log('llms.txt updated');
