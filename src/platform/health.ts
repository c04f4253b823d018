import type pg from 'pg';
import { errors } from '../core/errors.ts';

const READY_TIMEOUT_MS = 2000;

export class HealthService {
  readonly #pool: pg.Pool;
  readonly #startedAt = Date.now();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  live(): { status: 'ok'; uptime_seconds: number } {
    return { status: 'ok', uptime_seconds: Math.round((Date.now() - this.#startedAt) / 1000) };
  }

  /** Ready means the control database answers within the timeout; otherwise a 503. */
  async ready(): Promise<{ status: 'ready'; database: 'ok'; latency_ms: number }> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.#pool.query('select 1'), timeout]);
    } catch {
      throw errors.unavailable('The control database is not reachable.');
    } finally {
      clearTimeout(timer);
    }
    return { status: 'ready', database: 'ok', latency_ms: Math.round(performance.now() - started) };
  }
}
