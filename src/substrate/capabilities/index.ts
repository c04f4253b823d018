import { z } from 'zod';
import { strictInput } from '../../core/strict.ts';
import type { Capability } from '../types.ts';
import { recordDecision } from './record_decision.ts';
import { recordCommitment } from './record_commitment.ts';
import { recordLearning } from './record_learning.ts';
import { recordPrinciple } from './record_principle.ts';
import { supersedeDecision } from './supersede_decision.ts';
import { retirePrinciple } from './retire_principle.ts';
import { revertAction } from './revert_action.ts';
import { bulkRevertActions } from './bulk_revert_actions.ts';
import { sendEmailDraft } from './send_email_draft.ts';
import { upsertEntity } from './upsert_entity.ts';
import { updateEntity } from './update_entity.ts';
import { patchEntity } from './patch_entity.ts';
import { mergeEntities } from './merge_entities.ts';
import { deleteEntity } from './delete_entity.ts';
import { upsertSourceArtifact } from './upsert_source_artifact.ts';

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
  ].map((c) => [c.name, c as Capability]),
);

/** Each capability's payload wrapped as `{ payload }` and made strict, so errors name `payload.<field>` and unknown keys. */
export const payloadSchemas: ReadonlyMap<string, z.ZodType> = new Map(
  [...capabilities.values()].map((c) => [c.name, strictInput(z.object({ payload: c.payload }))]),
);
