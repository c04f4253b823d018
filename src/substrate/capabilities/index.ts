import { z } from 'zod';
import { strictInput } from '../../core/strict.ts';
import type { Capability } from '../types.ts';
import { recordDecision } from './record-decision.ts';
import { recordCommitment } from './record-commitment.ts';
import { recordLearning } from './record-learning.ts';
import { recordPrinciple } from './record-principle.ts';
import { supersedeDecision } from './supersede-decision.ts';
import { retirePrinciple } from './retire-principle.ts';
import { revertAction } from './revert-action.ts';
import { bulkRevertActions } from './bulk-revert-actions.ts';
import { sendEmailDraft } from './send-email-draft.ts';
import { upsertEntity } from './upsert-entity.ts';
import { updateEntity } from './update-entity.ts';
import { patchEntity } from './patch-entity.ts';
import { mergeEntities } from './merge-entities.ts';
import { deleteEntity } from './delete-entity.ts';
import { upsertSourceArtifact } from './upsert-source-artifact.ts';
import { mergeBranch } from './merge-branch.ts';

/** The capabilities the ledger can propose, by name. */
export const capabilities: ReadonlyMap<string, Capability> = new Map(
  [
    recordDecision,
    recordCommitment,
    recordLearning,
    recordPrinciple,
    supersedeDecision,
    retirePrinciple,
    revertAction,
    bulkRevertActions,
    sendEmailDraft,
    upsertEntity,
    updateEntity,
    patchEntity,
    mergeEntities,
    deleteEntity,
    upsertSourceArtifact,
    mergeBranch,
  ].map((c) => [c.name, c as Capability]),
);

/** Each capability's payload wrapped as `{ payload }` and made strict, so errors name `payload.<field>` and unknown keys. */
export const payloadSchemas: ReadonlyMap<string, z.ZodType> = new Map(
  [...capabilities.values()].map((c) => [c.name, strictInput(z.object({ payload: c.payload }))]),
);
