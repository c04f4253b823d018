import { z } from 'zod';
import { strictInput } from '../../core/strict.ts';
import type { Capability } from '../types.ts';
import { recordCommitment, recordDecision, recordLearning, recordPrinciple, retirePrinciple, supersedeDecision } from './memory.ts';
import { bulkRevertActions, revertAction } from './revert.ts';
import { entityCapabilities } from './entities.ts';
import { sendEmailDraft } from './email.ts';
import { artifactCapabilities } from './artifacts.ts';

/** The capabilities the ledger can propose, by name. */
export const capabilities: ReadonlyMap<string, Capability> = new Map(
  [recordDecision, recordCommitment, recordLearning, recordPrinciple, supersedeDecision, retirePrinciple, revertAction, bulkRevertActions, sendEmailDraft, ...entityCapabilities, ...artifactCapabilities].map(
    (c) => [c.name, c as Capability],
  ),
);

/** Each capability's payload wrapped as `{ payload }` and made strict, so errors name `payload.<field>` and unknown keys. */
export const payloadSchemas: ReadonlyMap<string, z.ZodType> = new Map(
  [...capabilities.values()].map((c) => [c.name, strictInput(z.object({ payload: c.payload }))]),
);
