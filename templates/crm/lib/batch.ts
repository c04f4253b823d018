// Scheduled functions work through many rows; one failing row must not stop the rest, and the log says which failed.
import { errorText } from './tools.ts';

/** Runs `work` for each item in turn; how many were done and how many failed (each failure logged with its label). */
export async function eachLogged<T>(items: readonly T[], label: (item: T) => string, work: (item: T) => Promise<unknown>): Promise<{ done: number; failed: number }> {
  let done = 0;
  let failed = 0;
  for (const item of items) {
    try {
      await work(item);
      done++;
    } catch (err) {
      failed++;
      console.error(`${label(item)}: ${errorText(err)}`);
    }
  }
  return { done, failed };
}
