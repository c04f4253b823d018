// The fake OpenAI upstream (test/fakes/openai-upstream.ts) in a process of its own, for tests that measure the
// platform's event loop: in the test's process, the fake's own work (it computes every embedding it answers, about
// 0.1 s for a batch of 96 chunks) would count as the platform's.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface FakeOpenAIProcess {
  /** The fake's base URL, as FakeOpenAI.url. */
  url: string;
  close(): Promise<void>;
}

const SERVE = 'serve-fake-openai';

export async function startFakeOpenAIProcess(): Promise<FakeOpenAIProcess> {
  const child = fork(fileURLToPath(import.meta.url), [SERVE], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { url: string }) => resolve(m.url));
    child.once('exit', (code) => reject(new Error(`the fake OpenAI process exited (code ${code}) before it listened`)));
  });
  return {
    url,
    close: async () => {
      child.kill();
      await exited;
    },
  };
}

if (process.argv[2] === SERVE && process.send) {
  const { startFakeOpenAI } = await import('../fakes/openai-upstream.ts');
  const fake = await startFakeOpenAI({ record: false });
  process.send({ url: fake.url });
  process.once('disconnect', () => process.exit(0));
}
