// The branches area's refusals, each with the next step.
import { AppError, errors } from '../core/errors.ts';

export const branchErrors = {
  notFound: (id: string) => errors.notFound(`Branch '${id.slice(0, 100)}'`, 'List the branches of the app with branches_list.'),
  notABranch: (id: string) => new AppError(400, 'NOT_A_BRANCH', `App '${id}' is not a branch.`, 'Make one with branches_create { app_id }, then work on its app_id.'),
  branchOfBranch: (id: string) =>
    new AppError(400, 'BRANCH_OF_BRANCH', `App '${id}' is itself a branch; branch its parent instead.`, 'Call branches_create with the parent_app_id branches_list shows.'),
  parentGone: (id: string) => new AppError(409, 'PARENT_GONE', `The app branch '${id}' was made from is gone.`, 'Delete the branch with branches_delete.'),
  tooMany: (parent: string, limit: number, plan: string) =>
    new AppError(403, 'BRANCH_LIMIT', `App '${parent}' has ${limit} branches, the ${plan} plan's limit.`, 'Delete a branch (branches_delete) or upgrade the plan.', { limit }),
  conflict: (parent: string, conflicts: unknown[]) =>
    new AppError(
      409,
      'MERGE_CONFLICT',
      `The branch and app '${parent}' both changed ${conflicts.length} thing${conflicts.length === 1 ? '' : 's'} differently; nothing was merged.`,
      "Make the branch agree with production on each conflict (details.conflicts has both values), or make a new branch from production and redo the change there; then branches_merge again.",
      { conflicts },
    ),
  nothing: (id: string) => new AppError(409, 'NOTHING_TO_MERGE', `Branch '${id}' has no change production lacks.`, 'Change the branch first; branches_diff shows what a merge would carry over.'),
  merging: (id: string, mergeId: string) =>
    new AppError(409, 'BRANCH_MERGING', `Branch '${id}' has merge '${mergeId}' waiting for a decision or applying.`, 'Wait until it is merged, failed or rejected (branches_list), then delete the branch.'),
  mergeNotFound: (id: string) => errors.notFound(`Merge '${id.slice(0, 100)}'`, 'List the merges of the app with branches_list.'),
  productionMoved: () =>
    new AppError(409, 'PRODUCTION_CHANGED', 'Production changed after this merge was planned; nothing was merged.', 'Call branches_diff to see the changes now, then branches_merge again.'),
  siteGone: () => new AppError(409, 'BRANCH_SITE_GONE', "The branch's site deployment is gone; nothing more was merged.", 'Deploy the branch site again, then branches_merge.'),
  siteBuild: (why: string) => new AppError(422, 'SITE_BUILD_FAILED', `The branch's site did not build in production: ${why}`, 'Fix the site on the branch, then branches_merge again.'),
  unprotectByPerson: (id: string) =>
    new AppError(403, 'HUMAN_CONFIRMATION_REQUIRED', `Only a person signed in with the admin role can lift the protection of app '${id}'.`, 'Ask an owner or admin to do it in the console.'),
};
