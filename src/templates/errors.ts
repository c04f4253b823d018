// The errors of templates and clones.
import { AppError, errors } from '../core/errors.ts';

export const templateErrors = {
  notFound: (appId: string) => errors.notFound(`Template '${appId}'`, 'List the templates you can see with templates_list (GET /v1/templates).'),
  cloneNotFound: (id: string) => errors.notFound(`Clone '${id}'`, 'List your clones with templates_clones_list (GET /v1/clones).'),
  publicNotAllowed: () =>
    new AppError(
      403,
      'TEMPLATES_PUBLIC_DISABLED',
      'This platform does not let accounts publish templates to every account.',
      "Publish with visibility 'account' (your account's members see it), or ask the operator to set SVC_TEMPLATES_PUBLIC=true.",
    ),
  shipped: () =>
    new AppError(403, 'TEMPLATE_SHIPPED', 'A template shipped with the platform is managed by the platform.', 'Clone it with templates_clone, then publish your clone as your own template.'),
  tooManyClones: (limit: number) =>
    new AppError(
      429,
      'CLONE_LIMIT',
      `This account already has ${limit} clones in progress (SVC_CLONES_PER_ACCOUNT).`,
      'Wait for one to reach ready or failed (templates_clone_get), or delete a failed one, then clone again.',
    ),
  notRetryable: (status: string) =>
    errors.conflict(
      `A clone can be retried when it failed, or when it is ready with its billing waiting on Stripe Connect; this one is ${status}.`,
      'Poll templates_clone_get until it is ready or failed.',
    ),
  finished: () => errors.conflict('The clone is ready: its app is an app like any other.', 'Delete the app itself with apps_delete (DELETE /apps/{app_id}).'),
  seedTooLarge: (bytes: number, limit: number) =>
    new AppError(
      413,
      'TEMPLATE_SEED_TOO_LARGE',
      `The seed rows to publish take ${bytes} bytes; a template's seed holds at most ${limit} bytes (${limit / 1024 / 1024} MiB).`,
      'Seed fewer or smaller rows (options.seed_tables names the tables; their rows count as JSON text), then publish again.',
    ),
  seedTooManyRows: (table: string, rows: number, limit: number) =>
    new AppError(
      413,
      'TEMPLATE_SEED_TOO_LARGE',
      `Seed table '${table}' has ${rows} rows to publish; a seed table holds at most ${limit}.`,
      'Delete rows the template does not need, or leave the table out of options.seed_tables, then publish again.',
    ),
  seedUserIdRequired: (table: string) =>
    errors.validation(
      `Seed table '${table}' requires user_id: its end users' rows cannot be pinned without their end users.`,
      [{ path: 'seed_end_user_rows', message: `'${table}' has a required user_id` }],
    ),
  republished: () =>
    errors.conflict('The template was published again while the clone was asked for: its seed rows changed.', 'Read the manifest again (templates_get), then clone again.'),
  seedSnapshotGone: () =>
    errors.conflict("The template's seed rows are gone (its app was deleted).", 'Clone another template, or ask its publisher to publish it again.'),
  /** `among`: what the names must be in, as a sentence's subject ('The app', 'options.seed_tables'). */
  unknownOptions: (what: string, names: readonly string[], known: readonly string[], among = 'The app') =>
    errors.validation(`Unknown ${what}: ${names.join(', ')}. ${among} has: ${known.length ? known.join(', ') : 'none'}.`, [{ path: what, message: `not in: ${known.join(', ')}` }]),
};
