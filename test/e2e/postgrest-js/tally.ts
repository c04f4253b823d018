// Tally of the PostgREST parity suite from vitest's JSON report: passed and failed cases per file, and the first
// line of each failure, to group them by cause. Not a test file.
//
//   flock /tmp/svc-test.lock npx vitest run test/e2e/postgrest-js --reporter=json --outputFile=/tmp/postgrest-parity.json
//   npx node test/e2e/postgrest-js/tally.ts /tmp/postgrest-parity.json
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface AssertionResult {
  fullName: string;
  status: string;
  failureMessages?: string[];
}
interface FileResult {
  name: string;
  message?: string;
  assertionResults: AssertionResult[];
}

const reportPath = process.argv[2] ?? '/tmp/postgrest-parity.json';
const report = JSON.parse(readFileSync(reportPath, 'utf8')) as { testResults: FileResult[] };
const strip = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');

let passed = 0;
let failed = 0;
for (const file of [...report.testResults].sort((a, b) => a.name.localeCompare(b.name))) {
  const ok = file.assertionResults.filter((a) => a.status === 'passed').length;
  const bad = file.assertionResults.filter((a) => a.status === 'failed');
  passed += ok;
  failed += bad.length;
  console.log(`\n${path.basename(file.name)}: ${ok} passed, ${bad.length} failed, of ${file.assertionResults.length}`);
  if (file.message) console.log(`  file error: ${strip(file.message).split('\n')[0]}`);
  for (const a of bad) {
    const first = strip(a.failureMessages?.[0] ?? '').split('\n').find((l) => l.trim()) ?? '';
    console.log(`  FAIL ${a.fullName}\n       ${first.slice(0, 300)}`);
  }
}
console.log(`\n${passed} passed, ${failed} failed`);
