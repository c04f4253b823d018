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
  unknownOptions: (what: string, names: readonly string[], known: readonly string[]) =>
    errors.validation(`Unknown ${what}: ${names.join(', ')}. The app has: ${known.length ? known.join(', ') : 'none'}.`, [{ path: what, message: 'not in the app' }]),
};
