import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './core/logger.ts';
import { isDatabaseOutage } from './core/pg-errors.ts';
import { startPlatform } from './composition.ts';

const [major] = process.versions.node.split('.').map(Number);
if (major! < 24) {
  console.error(
    `svc-platform needs Node 24 or newer (this is ${process.version}). Start it with npm start: npm ci installs Node 24 ` +
      `from the npm registry into node_modules/.bin (Linux x64/arm64), which npm puts first on PATH. Elsewhere, put Node 24 first on PATH.`,
  );
  process.exit(1);
}

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}
const log = createLogger(config);

// A database outage must not end the process. graphile-worker (0.18) leaves one promise of its own unawaited, a job's
// completion: retried, it rejects when the connections keep being cut, and Node ends a process on an unhandled
// rejection. That job stays locked and runs again once its lock expires (jobs are safe to run twice). Any other
// unhandled rejection still ends the process.
process.on('unhandledRejection', (reason) => {
  if (isDatabaseOutage(reason)) {
    log.warn({ err: reason }, 'a database call nobody awaited failed during an outage');
    return;
  }
  log.fatal({ err: reason }, 'unhandled rejection');
  process.exit(1);
});

try {
  const platform = await startPlatform(config, log);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    platform.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
} catch (err) {
  log.fatal({ err }, 'start failed');
  process.exit(1);
}
